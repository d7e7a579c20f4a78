"""Generation runs: source records (threads, label inventories) → a generator step → items of a project.

``sources`` reads source files (streaming, line-numbered errors), ``steps`` maps a step name to its
prompt, target kind and item builder, ``services`` starts and finishes runs, ``execution`` runs a
chunk on a worker. Runs use the judge runs' leased chunks (``judges.leasing``) and backends.
"""
