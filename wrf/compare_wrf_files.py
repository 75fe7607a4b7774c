#!/usr/bin/env python3
"""Compare WRF output files value by value with netCDF4-python (a reader that
is not Tessera): every variable, every frame, the global attributes.

  compare_wrf_files.py --against REF OUT   each case folder OUT/<case>/run1
                                           against OUT/REF/run1
  compare_wrf_files.py --restart FULL RESTARTED
                                           history frames of a restarted run
                                           against the same times of the
                                           uninterrupted run

Exit status 1 when anything differs."""
import argparse
import glob
import os
import sys

import netCDF4
import numpy as np

# Global attributes that name the writer, not the data.
WRITER_ATTRIBUTES = {"TITLE"}


def norm(name):
    """io_form 11 writes '_' where the others write ':' in file names."""
    return os.path.basename(name).replace(":", "_")


def files_of(folder):
    pats = ("wrfinput_d01", "wrfout_d01_*", "wrfrst_d01_*")
    found = {}
    for p in pats:
        for f in glob.glob(os.path.join(folder, p)):
            if not f[-5:-4] == "." or not f[-4:].isdigit():   # split pieces left behind
                found[norm(f)] = f
    return found


def times_of(ds):
    return ["".join(c.decode() for c in row) for row in ds["Times"][:]]


def compare_frames(a, b, ta, tb):
    """Variables that differ between frame ta of a and frame tb of b, and the
    largest absolute difference."""
    bad, worst = [], 0.0
    for v in sorted(set(a.variables) - {"Times"}):
        if v not in b.variables:
            bad.append(v + " (missing)")
            continue
        x, y = a[v], b[v]
        if x.dimensions and x.dimensions[0] == "Time":
            x, y = x[ta], y[tb]
        else:
            x, y = x[:], y[:]
        x, y = np.ma.getdata(x), np.ma.getdata(y)
        if x.shape != y.shape:
            bad.append(f"{v} (shape {x.shape} vs {y.shape})")
        elif x.dtype.kind in "fiu":
            d = float(np.max(np.abs(x.astype(float) - y.astype(float)))) if x.size else 0.0
            if not np.array_equal(x, y, equal_nan=x.dtype.kind == "f"):
                bad.append(v)
                worst = max(worst, d)
        elif not np.array_equal(x, y):
            bad.append(v)
    return bad, worst


def compare_files(fa, fb):
    a, b = netCDF4.Dataset(fa), netCDF4.Dataset(fb)
    try:
        ta, tb = times_of(a), times_of(b)
        problems = []
        if ta != tb:
            problems.append(f"Times {ta} vs {tb}")
        extra = sorted(set(b.variables) - set(a.variables))
        if extra:
            problems.append(f"only in the second: {extra}")
        worst = 0.0
        for t in range(min(len(ta), len(tb))):
            bad, w = compare_frames(a, b, t, t)
            worst = max(worst, w)
            if bad:
                problems.append(f"frame {ta[t]}: {len(bad)} variables differ {bad[:6]}")
        ga = {k: str(a.getncattr(k)) for k in a.ncattrs()}
        gb = {k: str(b.getncattr(k)) for k in b.ncattrs()}
        gdiff = sorted(k for k in set(ga) | set(gb) if ga.get(k) != gb.get(k) and k not in WRITER_ATTRIBUTES)
        if gdiff:
            problems.append(f"global attributes differ: {gdiff}")
        return len(a.variables), len(ta), problems, worst
    finally:
        a.close()
        b.close()


def against(ref, out):
    ok = True
    base = files_of(os.path.join(out, ref, "run1"))
    if not base:
        sys.exit(f"compare_wrf_files: no files in {os.path.join(out, ref, 'run1')}")
    for case in sorted(os.listdir(out)):
        folder = os.path.join(out, case, "run1")
        if case == ref or not os.path.isdir(folder):
            continue
        mine = files_of(folder)
        for name in sorted(base):
            if name not in mine:
                if not name.startswith("wrfinput") or case in ("pnc11",):
                    continue
                print(f"{case}: {name}: missing")
                ok = False
                continue
            nvars, nframes, problems, worst = compare_files(base[name], mine[name])
            verdict = "equal" if not problems else "DIFFERENT: " + "; ".join(problems)
            print(f"{case} vs {ref}: {name}: {nvars} variables, {nframes} frames: {verdict}"
                  + (f" (max abs diff {worst:g})" if problems else ""))
            ok = ok and not problems
    return ok


def restart(full, restarted):
    ok, n = True, 0
    whole = [f for f in files_of(full).values() if "wrfout" in f]
    later = [f for f in files_of(restarted).values() if "wrfout" in f]
    frames = {}
    for f in whole:
        ds = netCDF4.Dataset(f)
        for i, t in enumerate(times_of(ds)):
            frames[t] = (f, i)
        ds.close()
    for f in later:
        b = netCDF4.Dataset(f)
        for j, t in enumerate(times_of(b)):
            if t not in frames:
                print(f"restart: {t} of {os.path.basename(f)} is not in the uninterrupted run")
                ok = False
                continue
            a = netCDF4.Dataset(frames[t][0])
            bad, worst = compare_frames(a, b, frames[t][1], j)
            a.close()
            n += 1
            print(f"restart: history at {t}: " + ("equal to the uninterrupted run" if not bad else
                  f"DIFFERENT in {len(bad)} variables {bad[:6]} (max abs diff {worst:g})"))
            ok = ok and not bad
        b.close()
    if n == 0:
        print("restart: the restarted run wrote no history to compare")
        ok = False
    return ok


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--against", metavar="REF", help="case folder every other case is compared with")
    g.add_argument("--restart", action="store_true", help="compare a restarted run with the full one")
    p.add_argument("folders", nargs="+")
    a = p.parse_args()
    if a.restart:
        if len(a.folders) != 2:
            p.error("--restart takes FULL and RESTARTED")
        ok = restart(*a.folders)
    else:
        ok = against(a.against, a.folders[0])
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
