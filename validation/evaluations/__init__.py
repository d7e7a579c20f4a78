"""Paper evaluations on validated data: the numbers CoPA, IntentGrasp and IPQA publish, computed in Concord.

What every evaluation shares lives here; each kind's evaluations live in its folder,
``validation/kinds/<kind>/`` (statistics, readers, and ``evaluations.py`` declaring them):

- ``base``: an evaluation's result, rendering, caps and the runs it reads.
- ``registry``: the evaluations found by folder (``PaperEvaluation``), which the pages, the API,
  the commands' ``--check`` and snapshots loop over.
- ``forms``: the parameters as a page and the API read them.
- ``snapshots``: freezing and checking any of them, in the agreement reports' snapshot record.

The statistics modules are pure (arrays in, frozen results out); the ``*_report`` modules read.
"""
