"""The published studies the model is checked against, transcribed from
../shared/references (the numbers are theirs; the case descriptions say
which Tessera strategy stands for which WRF method, and why).

003: "WRF I/O: a quick case review", Hurricane Irma, 3100 x 1600 x 35, 6 h
forecast, history every 30 min (13 frames with the initial one), 24 s step
(900 steps), Xeon Gold 6154, 36 cores per node, Omni-Path, Lustre.
001: the 2002 WRF note, IBM SP + GPFS, 12 compute ranks, about 14 MB per
history output every 36 steps, 79 simulated hours per hour of compute.
"""
from __future__ import annotations

from .case import Case, bench_case
from .strategy import Strategy

IRMA_CORES = (324, 648, 1296, 2592, 4608)
#: "Computing Per Step" (s), NetCDF 3 table.
IRMA_STEP_S = {324: 1.576815, 648: 0.805103, 1296: 0.428261, 2592: 0.218161, 4608: 0.127812}
#: "Total Output Time (seconds)" per method, and "Wall Clock (seconds)".
IRMA_OUTPUT = {
    "serial": {324: 1323.22, 648: 1316.74, 1296: 886.33, 2592: 880.63, 4608: 1870.94},
    "direct": {324: 129.82, 648: 142.16, 1296: 198.05, 2592: 502.08, 4608: 1283.95},
    "aggregate": {324: 231.92, 648: 126.86, 1296: 119.53, 2592: 115.91, 4608: 86.25},
}
IRMA_WALL = {
    "serial": {324: 3020, 648: 2223, 1296: 1384, 2592: 1171, 4608: 2089},
    "direct": {324: 1765, 648: 985, 1296: 681, 2592: 790, 4608: 1489},
    "aggregate": {324: 1883, 648: 997, 1296: 596, 2592: 408, 4608: 294},
}
#: The table's 9216-core row (outside the 324..4608 range the study compares).
IRMA_9216 = {"serial": 1845.88, "direct": 2674.81, "aggregate": 154.78}
IRMA_METHOD = {"serial": "NetCDF 3 (io_form 2)", "direct": "PnetCDF, stripe 12 (io_form 11)",
               "aggregate": "PIO (io_form 12)"}
CORES_PER_NODE = 36


def irma_case(schema: str) -> Case:
    """The Irma run as a case: WRF's real history header (the 202-variable
    wrfout CDL shipped with the bench) on e_we x e_sn x e_vert = 3100 x 1600
    x 35, i.e. 3099 x 1599 x 34 mass points; compute per step as published.
    other_s (input, setup) is the NetCDF run's wall - compute - output at
    each core count, used only to turn predicted output into wall time."""
    c = bench_case(3099, 1599, 34, steps=900, output_every=75, schema=schema, name="irma")
    return c.with_(step_table=dict(IRMA_STEP_S))


def irma_other_s(cores: int) -> float:
    return IRMA_WALL["serial"][cores] - 900 * IRMA_STEP_S[cores] - IRMA_OUTPUT["serial"][cores]


def irma_strategy(method: str, cores: int) -> Strategy:
    """WRF's methods as Tessera strategies.
    serial: WRF gathers each whole field to rank 0 with MPI_Gatherv (one
    slab per field; receives by source, see moves.gatherv_in).
    direct: one blocking collective put per field (buffer of one field).
    aggregate: PIO box rearranger; one I/O task per node is assumed (the
    study does not give pioprocs)."""
    knobs = {"serial": {"slab_bytes": 1 << 40, "gatherv": True},
             "direct": {"buffer_bytes": 1},
             "aggregate": {"aggregators": max(1, cores // CORES_PER_NODE)}}[method]
    return Strategy(method, **knobs)


# --- the 2002 note -------------------------------------------------------------
NOTE_BYTES = 14e6               # "approximately 14 Mbytes ... every 36 time steps"
NOTE_RANKS = 12
NOTE_SIM_HOURS_PER_HOUR = 79.0  # the 12-rank run's computational speed
NOTE_NETCDF_BW = 5e6            # effective MB/s, NetCDF without servers
NOTE_BINARY_BW = 15.7e6
NOTE_SERVER_BW = 80e6           # "over 80 Mbytes/second" seen by the model with servers
#: What the note says its extrapolation shows (speed-up -> statement).
NOTE_CLAIMS = (
    "netcdf(0): 6 % of the run at 1x, above 10 % at 2x",
    "binary(0): about 2 % at 1x, not above 10 % until 6x",
    "netcdf(1): hidden up to 20x (about 6 % there), then jumps to the synchronous cost",
)
