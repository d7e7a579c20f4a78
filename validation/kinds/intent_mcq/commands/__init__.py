"""The intent_mcq kind's management commands, found by their names (``validation.kinds.kind_command``):
``validation/management/commands/<name>.py`` holds one line that asks for each."""

COMMANDS = ("mcq_eval", "mcq_gem_set", "mcq_subsets")
