"""`tessera tune [options] -- COMMAND...`: find the fastest output configuration.

Reruns COMMAND (any program that writes through Tessera, typically
`mpiexec -n 8 tessera-bench ...`) under different TESSERA_HINTS, reads the
statistics each tsr_close appends to TESSERA_STATS_FILE and the wall time, and
reports the fastest configuration with its measured ratio to the default and
the interval of that ratio; when the interval includes 1.0 it says that no
configuration is measurably better than the default and exports nothing.
docs/tuning.md is the user guide; the modules split the work by concept:

  space    knobs, ranges, hint strings, --space files
  runner   one run of the command: environment, scratch, timeout, figures
  session  trials, runs, budget, session file and resume by replay
  rules    ExPBB-style rules that order the search from the statistics
  search   strategy pass, successive halving, coordinate search, finals
  stats    spread of repeated runs, bootstrap interval of the ratio, verdict
  report   progress bar, table, verdict, CSV/JSON, plot
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import time
from dataclasses import replace

from ..cli_args import error_text
from .report import Progress, summary, table, write_outputs
from .runner import OBJECTIVES, Runner, Scratch, TrialInterrupted
from .model import make_order
from .search import SearchOptions, Tuner, TuneError
from .session import Evaluator, Session
from .space import (ALL_STRATEGIES, RunShape, SpaceError, build_space,
                         load_space_file)

#: Option defaults; None in argparse means "not given", so --resume can tell
#: the options saved in the session from the ones given again on the command line.
DEFAULTS = {
    "budget": 20, "repeat": 5, "objective": "wall", "space": None, "strategies": None,
    "ranks_for_servers": 0, "trial_timeout": None, "keep": 2, "finalists": 3,
    "min_gain": 0.02, "scratch": None, "baseline": "", "fixed": "", "files": "",
    "run_in_scratch": False, "ranks": 0, "stage_dir": "", "model": "",
}

EPILOG = """\
COMMAND may contain the placeholders {scratch} (a fresh directory for this run,
removed afterwards; also in TESSERA_TUNE_SCRATCH) and {json} (a path where the
command may write bench-style metrics: wall_s, output_blocked_s, write_bw).
Example:
  tessera tune --budget 20 -- mpiexec -n 4 tessera-bench --out {scratch} --json {json}
Apply a winner with: export TESSERA_HINTS='<printed line>' (no rebuild). A winner
is named only when the interval of its ratio to the default lies above 1.0.
"""


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tessera tune", usage="tessera tune [options] -- COMMAND...",
        description="Find the fastest Tessera output configuration for a run.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    a = p.add_argument
    a("--budget", type=int, help="most configurations to measure, the default included (20)")
    a("--repeat", type=int, help="runs of the default, each incumbent and each finalist "
                                 "(the finals run at least 3); decisions by median, the "
                                 "verdict by a bootstrap interval of the ratio (5)")
    a("--objective", choices=sorted(OBJECTIVES), help="what to minimise or maximise (wall)")
    a("--space", metavar="FILE", help="TOML file narrowing or widening the search space")
    a("--strategies", metavar="LIST", help=f"comma list out of {','.join(ALL_STRATEGIES)}")
    a("--ranks-for-servers", type=int, metavar="N",
      help="ranks COMMAND leaves for I/O servers (enables strategy servers)")
    a("--trial-timeout", type=float, metavar="S",
      help="stop a run after S seconds (default: 10x the default run, at least 60)")
    a("--keep", type=int, help="strategies searched after the strategy pass (2)")
    a("--finalists", type=int, help="configurations compared with the default at the end (3)")
    a("--min-gain", type=float, help="relative gain a move needs to be kept (0.02)")
    a("--out", metavar="DIR", help="where trials.csv/json, session.json, tune.png go "
                                   "(default tessera-tune-<timestamp>)")
    a("--scratch", metavar="DIR", help="parent of the scratch directory (default: cwd)")
    a("--resume", metavar="PATH", help="continue a saved session (its directory or "
                                       "session.json); options given again override")
    a("--baseline", metavar="HINTS", help="hints of the configuration to beat "
                                          "(default: none, the library defaults)")
    a("--fixed", metavar="HINTS", help="hints added to every run (e.g. format=cdf5)")
    a("--files", metavar="GLOB", help="tune only files matching GLOB (e.g. 'wrfout*')")
    a("--run-in-scratch", action="store_true", default=None,
      help="run COMMAND inside its scratch directory (outputs it writes to cwd)")
    a("--ranks", type=int, help="model ranks, when the command writes no statistics")
    a("--stage-dir", metavar="DIR", help="a fast tier trials may stage into: adds the knobs "
                                         "stage (off/on), stage_min_bytes and stage_format")
    a("--model", metavar="PROFILE", help="order the search by the cost model with this "
                                        "machine profile (docs/model.md): predicted best first")
    a("--no-plot", action="store_true", help="skip tune.png")
    a("--quiet", action="store_true", help="no progress output")
    return p


def split_argv(argv: list) -> tuple:
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1:]
    return argv, []


def resolve_options(args, saved: dict) -> dict:
    opts = {}
    for k, default in DEFAULTS.items():
        v = getattr(args, k)
        opts[k] = v if v is not None else saved.get(k, default)
    return opts


def check_options(o: dict) -> None:
    if o["budget"] < 1 or o["repeat"] < 1 or o["keep"] < 1 or o["finalists"] < 1:
        raise SpaceError("--budget, --repeat, --keep and --finalists must be at least 1")
    if o["ranks_for_servers"] < 0:
        raise SpaceError("--ranks-for-servers must be >= 0")
    if not 0 <= o["min_gain"] < 1:
        raise SpaceError("--min-gain must be in [0, 1)")
    if o["stage_dir"]:
        if any(c in o["stage_dir"] for c in ":,"):
            raise SpaceError("--stage-dir: the path must not contain ':' or ','")
        # Absolute, so --run-in-scratch does not move it; made now, since the
        # library stages into an existing directory.
        o["stage_dir"] = os.path.abspath(o["stage_dir"])
        os.makedirs(o["stage_dir"], exist_ok=True)


def session_path(resume: str) -> str:
    return os.path.join(resume, "session.json") if os.path.isdir(resume) else resume


def space_factory(o: dict):
    overrides = load_space_file(o["space"]) if o["space"] else None
    strategies = [s.strip() for s in o["strategies"].split(",") if s.strip()] \
        if o["strategies"] else None

    def make(shape: RunShape):
        shape = replace(shape, stage_dir=o["stage_dir"])
        return build_space(shape, strategies, overrides, fixed=o["fixed"], glob=o["files"],
                           baseline=o["baseline"])
    make(RunShape(ranks=1, server_ranks=o["ranks_for_servers"]))  # fail early on bad input
    return make


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    own, command = split_argv(argv)
    args = parser().parse_args(own)
    say = lambda msg: print(msg, file=sys.stderr)  # noqa: E731

    replay, saved = None, {}
    if args.resume:
        try:
            replay = Session.load(session_path(args.resume))
        except (OSError, ValueError) as exc:
            say(f"tessera tune: cannot resume: {error_text(exc)}")
            return 2
        saved = replay.meta.get("options", {})
        if command and command != replay.meta.get("command"):
            say("tessera tune: warning: COMMAND differs from the saved session's; "
                "saved runs of the same hints are reused as they are")
        command = command or replay.meta.get("command", [])
    if not command:
        parser().print_usage(sys.stderr)
        say("tessera tune: give the command to tune after '--'")
        return 2
    o = resolve_options(args, saved)
    try:
        check_options(o)
        make_space = space_factory(o)
        model = make_order(o["model"], command, o["objective"]) if o["model"] else None
    except (SpaceError, OSError) as exc:
        say(f"tessera tune: {error_text(exc)}")
        return 2

    if replay is not None:
        out_dir = os.path.dirname(os.path.abspath(replay.path))
        # The resumed session rewrites session.json as it replays; keep the old one.
        shutil.copyfile(replay.path, replay.path + ".bak")
    else:
        out_dir = os.path.abspath(args.out or time.strftime("tessera-tune-%Y%m%d-%H%M%S"))
        if os.path.exists(os.path.join(out_dir, "session.json")):
            say(f"tessera tune: {out_dir} already holds a session; use --resume {out_dir}")
            return 2
        os.makedirs(out_dir, exist_ok=True)

    meta = {"command": command, "options": o, "cwd": os.getcwd(),
            "started": time.strftime("%Y-%m-%dT%H:%M:%S")}
    session = Session(os.path.join(out_dir, "session.json"), meta)
    try:
        scratch = Scratch(o["scratch"])
    except OSError as exc:
        say(f"tessera tune: cannot create a scratch directory: {exc}")
        return 2
    runner = Runner(command, scratch, o["objective"], glob=o["files"],
                    run_in_scratch=bool(o["run_in_scratch"]))
    progress = Progress(o["budget"], OBJECTIVES[o["objective"]][0], quiet=args.quiet)
    ev = Evaluator(session, runner, make_space(RunShape(ranks=1,
                   server_ranks=o["ranks_for_servers"])), o["objective"], o["budget"],
                   replay=replay, progress=progress)
    sopts = SearchOptions(repeat=o["repeat"], keep=o["keep"], finalists=o["finalists"],
                          min_gain=o["min_gain"], trial_timeout=o["trial_timeout"],
                          ranks=o["ranks"], server_ranks=o["ranks_for_servers"],
                          model=model)
    tuner = Tuner(ev, make_space, command, sopts, say=progress.note)

    def on_term(signum, frame):
        raise KeyboardInterrupt()
    old_term = signal.signal(signal.SIGTERM, on_term)
    code = 0
    try:
        session.result = tuner.run()
        session.save()
    except (KeyboardInterrupt, TrialInterrupted):
        session.interrupted = True
        code = 130
    except (TuneError, SpaceError) as exc:
        say(f"tessera tune: {exc}")
        code = 2
    finally:
        signal.signal(signal.SIGTERM, old_term)
        progress.close()
        scratch.cleanup()
        # Also when interrupted: whatever was measured is written out.
        try:
            session.save()
            notes = write_outputs(out_dir, ev, session, o["objective"], plot=not args.no_plot)
        except (KeyboardInterrupt, OSError) as exc:
            notes = [f"could not write all outputs: {exc!r}"]
    if session.trials:
        print(table(ev, session))
    for n in notes:
        say(f"tessera tune: {n}")
    if code == 130:
        say(f"tessera tune: interrupted; {len(session.trials)} trial(s) saved. Continue with:\n"
            f"  tessera tune --resume {out_dir}")
        return code
    if code == 0:
        print()
        print(summary(session.result, o["objective"]))
        names = "trials.csv, trials.json, session.json"
        if os.path.exists(os.path.join(out_dir, "tune.png")):
            names += ", tune.png"
        if session.result.get("winner"):
            names += ", winner.env"
        print(f"Outputs: {out_dir} ({names})")
        if ev.replayed:
            say(f"tessera tune: {ev.replayed} run(s) replayed from the saved session")
    return code


if __name__ == "__main__":
    sys.exit(main())
