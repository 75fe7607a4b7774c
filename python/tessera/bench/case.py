"""The case `tessera demo` runs and the hints of each strategy it runs:
below both demo.py and formats.py, which runs the demo's case with some of
its strategies.
"""

#: The demo case: WRF-like fields, sized to finish in a few minutes on 2 cores.
CASE = {"np": 4, "nx": 240, "ny": 240, "nz": 35, "steps": 60, "output_every": 10, "sweeps": 3}

#: strategy -> hints, in the order the table shows them. Servers take one of
#: the ranks, so every strategy runs on the same number of processes.
STRATEGIES = {
    "serial": "strategy=serial",
    "direct": "strategy=direct",
    "aggregate": "strategy=aggregate:aggregators=2",
    "split": "strategy=split",
    "servers": "strategy=servers:io_groups=1:io_tasks=1",
}
