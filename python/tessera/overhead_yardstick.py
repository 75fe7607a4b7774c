"""The hand-written side of `tessera overhead --yardstick PROGRAM`.

PROGRAM is `wrfout_bench`, built from the project's outside reference
(`../shared/bench/wrfout_bench.c`: WRF-like frames written with each
library's own calls and nothing else, contiguous tiles touched before the
clock, NOFILL). It is code we did not write, so a ratio against it says what
Tessera, and the bench's own `--plain` baseline, cost over what a careful
user writes by hand. Its `RESULT,...` line gives `t_return` (create to close,
the maximum over ranks), which is what the bench reports as
`output_blocked_s` for the same bytes.
"""
from __future__ import annotations

import math
import shutil
import subprocess
from pathlib import Path

#: strategy -> the yardstick's method for the same file(s)
METHOD = {"serial": "gather", "aggregate1": "gather", "aggregate": "pnc_nb", "direct": "pnc_nb",
          "direct_deferred": "pnc_nb", "split": "split", "split_deferred": "split"}
#: --plain method -> the yardstick's method
PLAIN_METHOD = {"gather": "gather", "pnetcdf": "pnc_nb", "split": "split"}

#: Fields of the RESULT line (the yardstick's --verbose header names them).
RESULT_FIELDS = ("method", "tag", "ranks", "px", "py", "frames", "data_bytes", "file_bytes",
                 "t_def", "t_frames", "t_close", "t_return", "t_fsync", "t_total")


def process_grid(np: int) -> tuple:
    """(px, py) as the yardstick lays out np ranks: MPI_Dims_create's most
    balanced pair, fewer tasks in x (WRF-like)."""
    a = int(math.isqrt(np))
    while np % a:
        a -= 1
    return a, np // a


def argv(program: str, method: str, case: dict, out: Path) -> list:
    """The yardstick's command line for the bench's case (n3d and n2d come
    from the schema it replays)."""
    return [program, "--method", method, "--nofsync", "--nx", str(case["nx"]),
            "--ny", str(case["ny"]), "--nz", str(case["nz"]), "--n3d", str(case["n3d"]),
            "--n2d", str(case["n2d"]), "--frames", str(case["frames"]), "--dir", str(out)]


def parse(text: str) -> dict:
    """The RESULT line as a record: {"output_blocked_s": t_return, ...}, or
    {"error": ...} when the program printed none."""
    for line in text.splitlines():
        if line.startswith("RESULT,"):
            parts = line.split(",")
            rec = dict(zip(RESULT_FIELDS, parts[1:]))
            try:
                return {"output_blocked_s": float(rec["t_return"]), "t_def": float(rec["t_def"]),
                        "data_bytes": float(rec["data_bytes"]),
                        "file_bytes": float(rec["file_bytes"])}
            except (KeyError, ValueError):
                break
    return {"error": "the yardstick printed no RESULT line: " + text.strip()[-300:]}


def run(launcher: list, program: str, method: str, case: dict, out: Path, env: dict,
        timeout: float) -> tuple:
    """One run: (record, the command, its output)."""
    cmd = launcher + argv(program, method, case, out)
    out.mkdir(parents=True, exist_ok=True)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        text = proc.stdout + proc.stderr
        rec = parse(text) if proc.returncode == 0 else {"error": f"exit {proc.returncode}: "
                                                                 f"{text.strip()[-300:]}"}
    except (OSError, subprocess.TimeoutExpired) as e:
        text, rec = str(e), {"error": str(e)}
    return rec, cmd, text


def own_header(launcher: list, program: str, method: str, case: dict, out: Path, env: dict,
               timeout: float) -> Path:
    """The CDL header of the file the yardstick writes with METHOD, for the
    bench to replay: the program run on one rank of a 4 x 4 grid with no
    frame (`--frames 0`; the bench resizes the grid and its attributes from
    its own --nx --ny --nz), read back with `ncdump -h`. The fields of a
    schema in the yardstick's form are not its header: anchor12x30.cdl lacks
    the attributes the program writes (FieldType, MemoryOrder, description,
    units, coordinates, TITLE, DX, ...), so the bench's data began at byte
    3,584 where the yardstick's begins at 10,240. Replayed from here, both
    files hold the same header byte for byte (`test_overhead_yardstick`)."""
    ncdump = shutil.which("ncdump")
    if not ncdump:
        raise ValueError("--yardstick needs ncdump (Debian's netcdf-bin) to read the header "
                         "the program writes")
    where = out / f"header-{method}"
    shutil.rmtree(where, ignore_errors=True)
    rec, _, _ = run(launcher, program, method, dict(case, nx=4, ny=4, frames=0), where, env,
                    timeout)
    files = sorted(where.glob("wrfout_*"))  # split: wrfout_split.nc_0000
    if "error" in rec or not files:
        raise ValueError(f"--yardstick {program} --method {method} wrote no header to replay: "
                         f"{rec.get('error', 'no file')}")
    proc = subprocess.run([ncdump, "-h", str(files[0])], capture_output=True, text=True)
    shutil.rmtree(where, ignore_errors=True)
    if proc.returncode != 0:
        raise ValueError(f"ncdump -h {files[0]}: {proc.stderr.strip()}")
    cdl = out / f"yardstick-{method}.cdl"
    cdl.write_text(proc.stdout, encoding="utf-8")
    return cdl


def schema_counts(cdl: Path) -> tuple:
    """(3-D float fields, 2-D float fields) of a schema in the yardstick's form:
    (Time, bottom_top, south_north, west_east) and (Time, south_north,
    west_east). Anything else in it makes the comparison unfair: ValueError."""
    n3, n2 = 0, 0
    for line in cdl.read_text(encoding="utf-8").splitlines():
        s = line.strip()
        if not s.startswith(("float ", "double ", "int ", "short ", "byte ", "char ")):
            continue
        dims = s[s.index("(") + 1:s.index(")")].replace(" ", "") if "(" in s else ""
        if s.startswith("float ") and dims == "Time,bottom_top,south_north,west_east":
            n3 += 1
        elif s.startswith("float ") and dims == "Time,south_north,west_east":
            n2 += 1
        elif not (s.startswith("char Times") and dims == "Time,DateStrLen"):
            raise ValueError(f"{cdl}: '{s}' has no counterpart in the yardstick")
    return n3, n2
