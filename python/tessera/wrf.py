"""`tessera wrf <subcommand>`: Tessera in WRF (docs/wrf.md).

    tessera wrf install WRF_DIR [--tessera-config PATH] [--dry-run]

The subcommands live in their own modules (tessera.wrf_install); this one
only dispatches, so that `tessera wrf` can grow without one long file.
"""
from __future__ import annotations

import argparse
import sys

from . import wrf_install

SUBCOMMANDS = {
    "install": "make io_form 8 Tessera in a WRF v4 source tree (Registry, frame/, share/, build flags)",
}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="tessera wrf", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="sub", metavar="SUBCOMMAND")
    for name, help_ in SUBCOMMANDS.items():
        sub.add_parser(name, help=help_, add_help=False)
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in SUBCOMMANDS:
        if argv and argv[0] in ("-h", "--help"):
            p.print_help()
            return 0
        what = f"unknown subcommand '{argv[0]}'" if argv else "a subcommand is needed"
        print(f"tessera wrf: {what}: {', '.join(SUBCOMMANDS)}", file=sys.stderr)
        p.print_usage(sys.stderr)
        return 2
    return wrf_install.main(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
