"""Rationale inspection: its verdict prompt and the CoPA rationale-extraction generator."""
