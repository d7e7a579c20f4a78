"""demo_estimates: a sampled CoPA project with a baseline judge run and simulated labels; used by make run.

The command is the demo_estimates module of its kind's ``commands`` package, found by name.
"""

from validation.kinds import kind_command

Command = kind_command("demo_estimates")
