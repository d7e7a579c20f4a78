"""``mcq_subsets SLUG --size N --seed S [--seed S ...] [-o FOLDER]``: uniform subsets of an IntentGrasp All Set.

The command is the mcq_subsets module of its kind's ``commands`` package, found by name.
"""

from validation.kinds import kind_command

Command = kind_command("mcq_subsets")
