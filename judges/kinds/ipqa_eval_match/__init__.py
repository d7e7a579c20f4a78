"""IPQA-Eval intent matching: the LLM matcher's prompt and a lexical-overlap baseline."""
