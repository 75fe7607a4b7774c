"""Does the model-ordered search find the winner in fewer trials? Side by side.

    python -m tessera.tune_compare [--pairs 3] [--model here] [--out DIR]
                                   [tune options] -- COMMAND...

Runs `tessera tune` on the same COMMAND with the same options, once as it is
and once with `--model PROFILE`, alternating, --pairs times (so both meet the
same machine load), and prints for every session the trial at which it first
measured a configuration as good as its final candidate
(model.trials_to_winner), the candidate and the verdict, then the median
and range of trials-to-winner for each side. docs/model.md shows a result.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

from . import command as tune
from .model import trials_to_winner


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    own, command = tune.split_argv(argv)
    p = argparse.ArgumentParser(prog="python -m tessera.tune_compare")
    p.add_argument("--pairs", type=int, default=3)
    p.add_argument("--model", default="here", help="profile for the ordered side (here)")
    p.add_argument("--out", default="tune-compare", help="sessions go to DIR/plain-N, "
                                                         "DIR/model-N")
    args, tune_opts = p.parse_known_args(own)
    if not command or args.pairs < 1:
        p.error("give --pairs >= 1 and the command after '--'")
    rows = []
    for i in range(1, args.pairs + 1):
        for side in ("plain", "model"):
            out = os.path.join(args.out, f"{side}-{i}")
            extra = ["--model", args.model] if side == "model" else []
            code = tune.main(tune_opts + extra + ["--quiet", "--no-plot", "--out", out, "--"]
                             + command)
            if code != 0:
                print(f"{side}-{i}: tessera tune exit {code}", file=sys.stderr)
                return code
            with open(os.path.join(out, "session.json"), encoding="utf-8") as fh:
                s = json.load(fh)
            res = s["result"]
            rows.append((side, i, trials_to_winner(s), len(s["trials"]),
                         res["candidate"]["hints"] or "(default)", res["verdict"]))
    print(f"\n{'side':<6} {'#':>2} {'to winner':>9} {'trials':>6}  candidate (verdict)")
    for side, i, n, total, hints, verdict in rows:
        print(f"{side:<6} {i:>2} {n if n else '-':>9} {total:>6}  {hints} ({verdict})")
    for side in ("plain", "model"):
        v = [r[2] for r in rows if r[0] == side and r[2]]
        if v:
            print(f"{side}: trials to winner median {statistics.median(v):g}, "
                  f"range {min(v)}..{max(v)} over {len(v)} sessions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
