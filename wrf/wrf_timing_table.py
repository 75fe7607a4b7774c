#!/usr/bin/env python3
"""WRF's own timing lines per case of em_b_wave.sh, as a Markdown table:
medians (min-max) over the repeated runs of each case.

  wrf_timing_table.py OUT

Per run: the mean of "Timing for Writing wrfout..." (what the model waited
for a history write, on compute rank 0), their sum, the mean "Timing for
Writing restart", the mean "Timing for main" of steps without a write, and
wrf.exe's wall time."""
import glob
import os
import re
import statistics
import sys

WRITE = re.compile(r"Timing for Writing wrfout\S* for domain\s+\d+:\s+([\d.]+) elapsed")
RESTART = re.compile(r"Timing for Writing restart for domain\s+\d+:\s+([\d.]+) elapsed")
MAIN = re.compile(r"Timing for main: time \S+ on domain\s+\d+:\s+([\d.]+) elapsed")
ORDER = ["nc2", "pnc11", "quilt", "tsr-serial", "tsr-direct", "tsr-aggregate", "tsr-split",
         "tsr-servers", "quilt-tsr"]
NAMES = {"nc2": "io_form 2 (NetCDF, classic)", "pnc11": "io_form 11 (PnetCDF)",
         "quilt": "io_form 2 + WRF quilting (1 I/O task)", "tsr-serial": "io_form 8, strategy=serial",
         "tsr-direct": "io_form 8, strategy=direct", "tsr-aggregate": "io_form 8, strategy=aggregate",
         "tsr-split": "io_form 8, strategy=split",
         "tsr-servers": "io_form 8, Tessera's servers (1 I/O task)", "quilt-tsr": "io_form 8 + WRF quilting (1 I/O task)"}


def one_run(folder):
    writes, restarts, plain = [], [], []
    wrote = False
    with open(os.path.join(folder, "rsl.error.0000"), errors="replace") as f:
        for line in f:
            m = WRITE.search(line)
            if m:
                writes.append(float(m.group(1)))
                wrote = True
                continue
            m = RESTART.search(line)
            if m:
                restarts.append(float(m.group(1)))
                wrote = True
                continue
            m = MAIN.search(line)
            if m:
                if not wrote:
                    plain.append(float(m.group(1)))
                wrote = False
    wall = None
    w = os.path.join(folder, "wall.txt")
    if os.path.exists(w):
        wall = float(open(w).read().split()[1])
    return {"write": statistics.mean(writes) if writes else None, "writes": sum(writes),
            "n": len(writes), "restart": statistics.mean(restarts) if restarts else None,
            "step": statistics.mean(plain) if plain else None, "wall": wall}


def cell(values, fmt="{:.2f}"):
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    m = statistics.median(values)
    return f"{fmt.format(m)} ({fmt.format(min(values))}-{fmt.format(max(values))})"


def main():
    out = sys.argv[1]
    cases = [c for c in ORDER if glob.glob(os.path.join(out, c, "run*", "rsl.error.0000"))]
    if not cases:
        sys.exit(f"wrf_timing_table: no runs under {out}")
    print("| configuration | runs | history write (s, mean per write) | all history writes (s) "
          "| restart write (s) | step without a write (s) | wrf.exe wall (s) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for c in cases:
        runs = [one_run(d) for d in sorted(glob.glob(os.path.join(out, c, "run*")))
                if os.path.exists(os.path.join(d, "rsl.error.0000"))]
        print(f"| {NAMES[c]} | {len(runs)} x {runs[0]['n']} writes | {cell([r['write'] for r in runs], '{:.3f}')} | "
              f"{cell([r['writes'] for r in runs])} | {cell([r['restart'] for r in runs])} | "
              f"{cell([r['step'] for r in runs], '{:.3f}')} | "
              f"{cell([r['wall'] for r in runs])} |")


if __name__ == "__main__":
    main()
