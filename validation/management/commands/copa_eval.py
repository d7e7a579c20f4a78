"""``copa_eval SLUG --run ID [--run ID ...] [--people]``: CoPA's Table 3 and Table 4 (paper 001, §5.2).

The command is the copa_eval module of its kind's ``commands`` package, found by name.
"""

from validation.kinds import kind_command

Command = kind_command("copa_eval")
