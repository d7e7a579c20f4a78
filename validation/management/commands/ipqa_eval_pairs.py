"""``ipqa_eval_pairs SLUG --predictions FILE --into MATCH_SLUG``: the IPQA-Eval match project's items.

The command is the ipqa_eval_pairs module of its kind's ``commands`` package, found by name.
"""

from validation.kinds import kind_command

Command = kind_command("ipqa_eval_pairs")
