"""Launching tessera-bench: where the executable is, and the mpiexec command
line that runs N processes on this machine."""
from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys

#: tessera-bench's exit code when the strategy or backend is not built in.
BENCH_EXIT_NOTBUILT = 3


def find_program(name: str, explicit: str | None = None) -> str | None:
    """A Tessera program: the given path, PATH, or the default build tree
    (build/apps/<name without 'tessera-'>/<name>)."""
    if explicit:
        return explicit if os.access(explicit, os.X_OK) else None
    found = shutil.which(name)
    if found:
        return found
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    candidate = os.path.join(root, "build", "apps", name.removeprefix("tessera-"), name)
    return candidate if os.access(candidate, os.X_OK) else None


def find_bench(explicit: str | None = None) -> str | None:
    """The tessera-bench to run: the given path, PATH, or the default build tree."""
    return find_program("tessera-bench", explicit)


def bench_or_say(tool: str, explicit: str | None = None) -> str | None:
    """find_bench, or None after telling the user on stderr how to get one."""
    bench = find_bench(explicit)
    if not bench:
        print(f"tessera {tool}: tessera-bench not found; build it with `make build` or pass "
              "--bench PATH", file=sys.stderr)
    return bench


CASE_KEYS = ("nx", "ny", "nz", "steps", "output_every", "sweeps")


def add_case_options(add, case: dict, keys=CASE_KEYS) -> None:
    """The bench's case options (`--nx` ... `--sweeps`) with `case`'s defaults,
    for the tools that run the bench on one case (demo, overhead, formats)."""
    for key in keys:
        flag = key.replace("_", "-")
        add(f"--{flag}", type=int, default=case[key], help=f"bench --{flag} ({case[key]})")


@functools.lru_cache(maxsize=None)
def is_open_mpi(mpiexec: str) -> bool:
    try:
        out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True,
                             timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "Open MPI" in out or "OpenRTE" in out


def mpiexec_command(mpiexec: str, np: int) -> list[str]:
    """`mpiexec -n NP` with Open MPI's flags for more ranks than cores and for root."""
    cmd = [mpiexec]
    if is_open_mpi(mpiexec):
        cmd.append("--oversubscribe")
        if hasattr(os, "getuid") and os.getuid() == 0:
            cmd.append("--allow-run-as-root")
    return cmd + ["-n", str(np)]


def bench_env() -> tuple[dict, bool]:
    """The environment for runs that choose their own strategy: oversubscribed
    launches allowed, TESSERA_HINTS (which would override every run's hints)
    removed; and whether it was set."""
    env = dict(os.environ)
    env.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")
    return env, env.pop("TESSERA_HINTS", None) is not None
