"""The autotuner (docs/tuning.md): the space of configurations (space.py),
the runs (runner.py, session.py), the search (search.py, rules.py, stats.py),
the cost model's order of trials (model.py) and the report (report.py).
`tessera tune` is command.py; compare.py sets tuning with and without the
model side by side."""
