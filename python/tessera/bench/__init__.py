"""Running tessera-bench and presenting its results: launching it
(launch.py), the demo's case and strategies (case.py), reading its --json
records (results.py) and the staged rows' table (stage_table.py), under the
commands demo, formats, overhead, table and plot."""
