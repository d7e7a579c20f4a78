"""``mcq_gem_set SLUG --run ID [--run ID ...] --per-domain N [--seed S] [-o FILE.jsonl]``: the IntentGrasp Gem Set.

The command is the mcq_gem_set module of its kind's ``commands`` package, found by name.
"""

from validation.kinds import kind_command

Command = kind_command("mcq_gem_set")
