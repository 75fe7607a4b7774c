#!/usr/bin/env python3
"""No file-level call circles: runs the shared tool circles.py on the given
folders (from the project root) and fails unless it counts 0.

Usage: check_circles.py CIRCLES_PY PROJECT_ROOT DIR...

CIRCLES_PY is ../shared/tools/circles.py beside the checkout; where it is
absent (a checkout on its own) the test is skipped (exit 77) and says why.
"""
import os
import shutil
import subprocess
import sys

EXPECTED = 0  # circles in src/ and apps/; any circle is a failure


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        return 2
    tool, root, dirs = sys.argv[1], sys.argv[2], sys.argv[3:]
    if not os.path.isfile(tool):
        print(f"SKIP: {tool} is absent (../shared is not beside this checkout)")
        return 77
    if not shutil.which("ctags"):
        print("SKIP: ctags (Universal Ctags), which circles.py needs, is not installed")
        return 77
    r = subprocess.run([sys.executable, tool] + dirs, cwd=root, capture_output=True, text=True)
    sys.stdout.write(r.stdout)
    sys.stderr.write(r.stderr)
    lines = r.stdout.strip().splitlines()
    if r.returncode != 0 or not lines or not lines[-1].isdigit():
        print("circles.py failed or printed no count")
        return 1
    count = int(lines[-1])
    if count != EXPECTED:
        print(f"{count} call circle(s) in {' '.join(dirs)}, expected {EXPECTED}: move the functions "
              "that make files call each other so that every file calls only down")
        return 1
    print(f"{count} call circles in {' '.join(dirs)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
