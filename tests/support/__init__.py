"""Test and bench tooling that production code never imports."""
