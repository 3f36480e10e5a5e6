"""What is measured on a grid point: metrics, main-task fairness, MDL probing, and model selection on dev."""
