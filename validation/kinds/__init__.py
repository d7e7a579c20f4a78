"""The validation layer's part of each task kind, found by the kind's name.

``validation/kinds/<kind>/`` holds what the papers compute from that kind's validated data: its
statistics and readers, and ``evaluations.py``, whose ``EVALUATIONS`` tuple declares the kind's paper
evaluations (:class:`validation.evaluations.registry.PaperEvaluation`). A kind without the folder or
the module has none. The kind's agreement report is ``validation/reports/<kind>.py``
(``validation.reports.build.report_builder``). Nothing outside these folders names a kind: the report
page, the evaluation pages, the API and snapshots loop over what ``validation.evaluations.registry``
finds here.
"""
