"""Launching tessera-bench: where the executable is, the mpiexec command
line that runs N processes on this machine, and one run with its outcome."""
from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from ..cli_args import at_least

#: tessera-bench's exit code when the strategy or backend is not built in.
BENCH_EXIT_NOTBUILT = 3


def find_program(name: str, explicit: str | None = None) -> str | None:
    """A Tessera program: the given path, the installed command's own bin
    directory ($TESSERA_BINDIR, set by <prefix>/bin/tessera, so an installed
    `tessera` finds its programs without PATH), PATH, or the default build
    tree (build/apps/<name without 'tessera-'>/<name>)."""
    if explicit:
        return explicit if os.access(explicit, os.X_OK) else None
    bindir = os.environ.get("TESSERA_BINDIR")
    if bindir and os.access(os.path.join(bindir, name), os.X_OK):
        return os.path.join(bindir, name)
    found = shutil.which(name)
    if found:
        return found
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(os.path.dirname(here)))  # from python/tessera/bench/
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
        add(f"--{flag}", type=at_least(0 if key in ("steps", "sweeps") else 1),
            default=case[key], help=f"bench --{flag} ({case[key]})")


def add_launch_options(add, timeout: float) -> None:
    """--mpiexec and --timeout (seconds per run) of the tools that launch the
    bench (demo, overhead, formats)."""
    add("--mpiexec", default="mpiexec", help="MPI launcher (mpiexec)")
    add("--timeout", type=float, default=timeout,
        help=f"seconds allowed per run ({timeout:g})")


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


def run_bench(mpiexec: str, np: int, bench: str, argv: list[str], env: dict, log: Path,
              timeout: float) -> tuple[int, str, str, float]:
    """One bench run under mpiexec: exit code, stdout, stderr, seconds; the
    command and what it printed are appended to `log`."""
    cmd = mpiexec_command(mpiexec, np) + [bench] + argv
    t0 = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        rc, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as e:
        rc, stdout, stderr = -1, str(e.stdout or ""), f"timed out after {timeout:.0f} s"
    except OSError as e:
        rc, stdout, stderr = -1, "", f"cannot run {cmd[0]}: {e.strerror}"
    elapsed = time.monotonic() - t0
    with open(log, "a", encoding="utf-8") as fh:
        fh.write(f"$ {' '.join(cmd)}\n{stdout}{stderr}")
    return rc, stdout, stderr, elapsed


def mpiexec_refusal(text: str) -> str | None:
    """One sentence for Open MPI's usual refusals to start (its banners run to
    twenty lines and are cut mid-sentence by any tail), with the flag to add;
    None when @p text holds none of them."""
    flat = " ".join(text.split())
    if "detected an attempt to run as root" in flat:
        return ("mpiexec refuses to run as root: add --allow-run-as-root to the mpiexec "
                "command (or export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)")
    m = re.search(r"not enough slots available in the system to satisfy the (\d+) slots", flat)
    if m:
        return (f"mpiexec has fewer slots (cores) than the {m.group(1)} processes asked for: add "
                f"--oversubscribe to the mpiexec command (or export "
                f"OMPI_MCA_rmaps_base_oversubscribe=1), or ask for fewer")
    m = re.search(r"could not access or execute an executable: Executable: (\S+)", flat)
    if m:
        return f"mpiexec cannot run {m.group(1)}: no such executable file"
    return None


def bench_message(stderr: str, stdout: str = "") -> str:
    """What the bench said about a failure: its own lines ("tessera-bench: ...",
    "check: FAILED: ..."), not the launcher's banners."""
    lines = [ln.strip() for ln in (stderr + "\n" + stdout).splitlines()]
    own = [ln for ln in lines if ln.startswith(("tessera-bench:", "check: FAILED"))]
    if own:
        return own[0]
    refusal = mpiexec_refusal(stderr + "\n" + stdout)
    if refusal:
        return refusal
    rest = [ln for ln in lines if ln and not set(ln) <= set("-=")]
    return rest[-1] if rest else "no message"


def bench_outcome(rc: int, stdout: str, stderr: str, json_path: Path,
                  check: bool = True) -> tuple[str, str, dict]:
    """(status, message, metrics) of one finished run: "ok", "not built" or
    "failed"; with `check`, a run whose --check did not pass failed."""
    if rc == BENCH_EXIT_NOTBUILT or "TSR_ENOTBUILT" in stderr:
        return "not built", f"not built into this library ({bench_message(stderr)})", {}
    if rc != 0:
        return "failed", f"exit {rc}: {bench_message(stderr, stdout)}", {}
    try:
        with open(json_path, encoding="utf-8") as fh:
            metrics = json.load(fh)
    except (OSError, json.JSONDecodeError) as e:
        return "failed", f"no metrics in {json_path}: {e}", {}
    if check and metrics.get("check") != "passed":
        return "failed", f"check {metrics.get('check')}", metrics
    return "ok", "", metrics
