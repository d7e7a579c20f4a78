"""IPQA core-intent verification: its validation and generation prompts and its baselines."""
