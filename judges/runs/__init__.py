"""The chunked-run engine: judge runs and generation runs are its instances (judges.runs.types).

- ``types``: the protocol a run type implements, and the registry of run types.
- ``services``: a run's lifecycle (cancel, resume, stop, recount, finish, watch, what to send).
- ``execution``: one chunk on a worker (claim under a lease, call the backend, record).
- ``views``: the cancel, resume and progress pages every run type shares.

Claims, leases and hand-backs are ``judges.leasing``; the Celery tasks are ``judges.tasks``.
"""
