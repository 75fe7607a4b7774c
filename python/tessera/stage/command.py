"""`tessera stage recover STAGE_DIR`: finish the drains a crash interrupted
(protocol.py says how); `tessera stage in SRC... --to DIR`: copy inputs to
the fast tier before a job (inputs.py).
"""
from __future__ import annotations

import argparse
import os
import sys

from . import inputs as stage_in
from .protocol import recover


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="tessera stage",
        description="Fast-tier staging tools (docs/staging.md).")
    sub = p.add_subparsers(dest="action", required=True)
    r = sub.add_parser("recover", help="finish drains a crash interrupted")
    r.add_argument("stage_dir", metavar="STAGE_DIR")
    i = sub.add_parser("in", help="copy input files to the fast tier before a job, "
                                  "where tsr_open with stage_dir=DIR reads them")
    i.add_argument("sources", metavar="SRC", nargs="+")
    i.add_argument("--to", required=True, metavar="DIR", help="the stage (the stage_dir hint)")
    args = p.parse_args(argv)
    if args.action == "in":
        try:
            return 1 if stage_in.run(args.sources, args.to) else 0
        except OSError as e:
            print(f"tessera stage in: cannot make {args.to}: {e.strerror}", file=sys.stderr)
            return 2
    if not os.path.isdir(args.stage_dir):
        print(f"tessera stage: {args.stage_dir} is not a directory", file=sys.stderr)
        return 2
    return 1 if recover(args.stage_dir) else 0


if __name__ == "__main__":
    sys.exit(main())
