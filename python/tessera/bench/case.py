"""The case `tessera demo` runs and the hints of each strategy it runs:
below both demo.py and formats.py, which runs the demo's case with some of
its strategies.
"""
from ..strategies import STRATEGIES as ALL

#: The demo case: WRF-like fields, sized to finish in a few minutes on 2 cores.
CASE = {"np": 4, "nx": 240, "ny": 240, "nz": 35, "steps": 60, "output_every": 10, "sweeps": 3}

#: strategy -> hints, in the order the table shows them (strategies.py:
#: servers take one of the ranks, so every strategy runs on as many processes).
STRATEGIES = {name: row.demo_hints for name, row in ALL.items()}
