"""Fresh attackers trained on released representations (docs/methods.md, "Threat model")."""
