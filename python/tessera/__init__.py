"""Tessera's command-line tools: `tessera <command>` (or `python -m tessera <command>`).

Commands (see `python -m tessera --help`): demo (run the benchmark model for
every built strategy and compare), table and plot (present bench --json
results), tune (autotuner) and stats (library statistics), each a module
`tessera.<command>` exposing `main(argv)`.
"""

__version__ = "0.1.0"
