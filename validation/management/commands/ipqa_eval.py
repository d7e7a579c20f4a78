"""``ipqa_eval SLUG --predictions FILE --run ID``: IPQA-Eval precision, recall and F1 (IPQA, §2.1).

The command is the ipqa_eval module of its kind's ``commands`` package, found by name.
"""

from validation.kinds import kind_command

Command = kind_command("ipqa_eval")
