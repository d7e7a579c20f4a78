"""The ipqa_core_intent kind's management commands, found by their names (``validation.kinds.kind_command``):
``validation/management/commands/<name>.py`` holds one line that asks for each."""

COMMANDS = ("ipqa_eval", "ipqa_eval_pairs", "ipqa_validation")
