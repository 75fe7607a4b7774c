"""`tessera <command> [args]` (or `python -m tessera ...`): dispatch to the
module tessera.<command>. Installed as the console script `tessera`
(python/pyproject.toml).

The table below is the whole registry: a command is a module of this package
exposing `main(argv) -> int`, tessera.<command>, or tessera.<command>.command
where the command has a room of its own (ROOMS). A command whose module is
not present in this checkout answers with a clear message instead of a
traceback.
"""
from __future__ import annotations

import importlib
import sys

from . import __version__

#: command -> one-line description; the module is tessera.<command> (but see ROOMS).
COMMANDS = {
    "demo": "run tessera-bench for every built strategy, verify, compare (make demo)",
    "overhead": "time each strategy against the same files written without Tessera",
    "table": "print the comparison table of tessera-bench --json results",
    "plot": "draw the comparison chart (PNG) of tessera-bench --json results",
    "tune": "find the fastest output configuration for a run (autotuner)",
    "stats": "summarise TESSERA_STATS_FILE statistics records",
    "join": "join the per-rank pieces of strategy=split output into one NetCDF file",
    "clean": "remove the temporaries and locks that interrupted runs left behind",
    "model": "output cost model: calibrate a machine profile, predict, validate (docs/model.md)",
    "advise": "recommend a strategy and its knobs for a case from the cost model",
    "stage": "fast-tier staging: `stage in SRC... --to DIR` before a job, `stage recover STAGE_DIR` after a crash",
    "formats": "time serial/aggregate/servers writing CDF-2, NetCDF-4, NetCDF-4 deflate=1",
    "convert": "convert between NetCDF and Zarr (INPUT --to FORMAT --out PATH), or a staged log into its file",
    "wrf": "Tessera in WRF: `wrf install WRF_DIR` makes io_form 8 Tessera (docs/wrf.md)",
    "scaling": "memory and messages per process at 16-256 processes, by simulation (docs/scaling.md)",
    "verify": "recompute the per-frame checksums of files written with checksum=crc32 (docs/verify.md)",
    "follow": "print (or run a command on) each frame as soon as the manifest says it is complete",
    "auto-bench": "strategy=auto against each fixed candidate and the default, interleaved (docs/auto.md)",
}

#: Commands whose module lives in the room (subpackage) of the same name:
#: tessera.<command>.command, and `python -m tessera.<command>` runs it too.
ROOMS = ("model", "tune", "stats", "stage")


def module_name(command: str) -> str:
    """The dotted name of a command's module."""
    name = command.replace("-", "_")  # auto-bench: tessera.auto_bench
    return f"tessera.{name}.command" if command in ROOMS else f"tessera.{name}"


def usage() -> str:
    width = max(len(c) for c in COMMANDS)
    lines = ["usage: tessera [--version] <command> [args]", "", "commands:"]
    lines += [f"  {c.ljust(width)}  {d}" for c, d in COMMANDS.items()]
    lines += ["", "`tessera <command> --help` describes a command, "
              "`tessera <command> --version` prints its version."]
    return "\n".join(lines)


def load(command: str):
    """The module of a command, or None when this checkout does not have it."""
    if command not in COMMANDS:
        return None
    try:
        module = importlib.import_module(module_name(command))
    except ModuleNotFoundError as e:
        if e.name in (f"tessera.{command}", module_name(command)):
            return None
        raise
    return module if callable(getattr(module, "main", None)) else None


def asks_version(args: list) -> bool:
    """--version among a command's own options (not in the COMMAND after `--`
    that `tessera tune` runs)."""
    own = args[:args.index("--")] if "--" in args else args
    return "--version" in own


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(usage())
        return 0 if argv else 2
    if argv[0] in ("--version", "-V"):
        print(f"tessera {__version__}")
        return 0
    command, rest = argv[0], argv[1:]
    if command not in COMMANDS:
        print(f"tessera: unknown command '{command}'\n\n{usage()}", file=sys.stderr)
        return 2
    try:
        module = load(command)
    except ModuleNotFoundError as e:
        # A dependency of the command (python/pyproject.toml) is missing.
        print(f"tessera: command '{command}' needs the Python package '{e.name}', which "
              f"{sys.executable} does not have: install the tools with `pip install "
              f"./python` (from the Tessera sources), or point TESSERA_PYTHON at an "
              f"interpreter that has them", file=sys.stderr)
        return 2
    if module is None:
        print(f"tessera: command '{command}' is not available in this checkout "
              f"(no module {module_name(command)} with main(argv))", file=sys.stderr)
        return 2
    if asks_version(rest):
        # Every command, including those added later, answers the same way.
        print(f"tessera {command} {__version__}")
        return 0
    rc = module.main(rest)
    return int(rc or 0)


if __name__ == "__main__":
    sys.exit(main())
