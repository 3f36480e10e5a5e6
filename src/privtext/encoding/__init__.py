"""From text to frozen features: the pinned encoders, word dropout on the input, and the embed stage."""
