"""The copa_likert kind's management commands, found by their names (``validation.kinds.kind_command``):
``validation/management/commands/<name>.py`` holds one line that asks for each."""

COMMANDS = ("copa_eval", "demo_estimates")
