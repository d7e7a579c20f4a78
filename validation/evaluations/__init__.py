"""Paper evaluations on validated data: the numbers CoPA and IntentGrasp publish, computed in Concord.

- ``copa``: CoPA's Accuracy / Tie rate / Margin of an evaluator over accepted vs top-voted pairs and
  the factor ablation (paper 001, §5.2, Tables 3, 4, A4); ``copa_report`` reads a project for it.
- ``mcq_eval``: IntentGrasp's per-run F1, its spread over option orders, the baselines (paper 002,
  §4, App. A.2, A.3, B.3); ``mcq_report`` reads a project for it; ``human_scores`` is the input
  table of the estimated human baseline.
- ``snapshots``: freezing and checking either, in the agreement reports' snapshot record.

The statistics modules are pure (arrays in, frozen results out); the ``*_report`` modules read.
"""
