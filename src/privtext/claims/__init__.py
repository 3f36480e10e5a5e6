"""The claims table (docs/claims.md): seeds-and-examples intervals, verdict rules, the test records they
read, and each claim of the three papers."""
