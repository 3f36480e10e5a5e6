"""The privacy layers and their true sensitivity (docs/methods.md, "Privacy layers"), what each release
costs in ε, and the empirical ε audit (docs/audit.md)."""
