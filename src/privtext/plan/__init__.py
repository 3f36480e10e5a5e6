"""What to run: the validated configuration and the grid of points it expands to (the Snakefile reads these)."""
