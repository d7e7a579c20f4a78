"""``ipqa_validation SLUG [--judge-run ID]``: an IPQA project's human validation by question complexity.

The command is the ipqa_validation module of its kind's ``commands`` package, found by name.
"""

from validation.kinds import kind_command

Command = kind_command("ipqa_validation")
