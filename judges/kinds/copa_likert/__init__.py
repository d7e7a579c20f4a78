"""CoPA six-factor Likert rating: its judge and generator prompts and its baselines."""
