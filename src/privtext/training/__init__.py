"""The training loop every neural method uses (training rule, plateau criterion), its torch building
blocks, and end-to-end fine-tuning of the text encoder."""
