"""``mcq_eval SLUG --run ID [--run ID ...]``: IntentGrasp model evaluation (paper 002, §4, App. A-B).

The command is the mcq_eval module of its kind's ``commands`` package, found by name.
"""

from validation.kinds import kind_command

Command = kind_command("mcq_eval")
