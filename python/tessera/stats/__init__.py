"""The library's statistics (docs/statistics.md): reading the records
(records.py), the rules that turn them into advice (rules.py), the chart
(plot.py) and the `tessera stats` command (command.py)."""
