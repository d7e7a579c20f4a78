"""The replace test: may a model's labels stand in for the people's?

- ``statistics``: the Alternative Annotator Test (Calderon, Reichart & Dror, ACL 2025), pure.
- ``who_rated``: agreement by who rated (people, runs in a person's place, runs together) and the
  calibration of a run's scores against the people's majority, pure.
- ``planning``: the authors' simulation (their Appendix C) as a planner of how many items to annotate.
- ``build``: all of it on a project's ratings and runs, as the ``alt_test`` evaluation.
- ``forms``: its parameters as the page and the API read them.
"""
