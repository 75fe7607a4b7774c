"""`tessera join [--out DIR | -o FILE] [--force] PIECE_OR_PATH...`: join split output.

strategy=split (WRF io_form=102) leaves one piece per rank, `<path>.0000` ..
`<path>.<nranks-1>`, each holding only that rank's tile of every decomposed
variable (see src/strategy/split.c). This is the inverse, like WRF's joiner
tools: the joined file has the global dimensions (from each variable's
`tessera_global_shape`), the pieces' format, every variable and attribute except
the ones split added, decomposed variables assembled from their tiles at
`tessera_tile_start`, and replicated variables from piece 0.

Values are copied bit-exactly (netCDF4 masking, scaling and char conversion are
off on every variable), and memory stays bounded by one frame of one variable:
the output is written variable by variable, record by record. NetCDF-4 pieces'
storage (compression, shuffle, quantization, chunk shape) is kept per variable
(join_storage.py), and the output line says which.

Each argument names one file to join, by its base path or by any of its pieces;
the pieces are always found from `tessera_split_nranks`, so `tessera join
out/wrfout_d01_*` joins every file of a run. Joined files go to `--out DIR`
(default: the sibling directory `<pieces' directory>-joined`, e.g. `out-joined/`
for pieces in `out/`), or to `-o FILE` (one file only), and never beside the
pieces: `ncrcat out/wrfout_d01_*` would then read pieces and joined files
together. An existing output is kept unless `--force`.
"""
from __future__ import annotations

import argparse
import os
import re
import sys

import netCDF4
import numpy as np

from .join_storage import summary, variable_storage

#: Attributes split.c adds; everything else is the model's and is kept.
# tessera_crc32 (checksum=crc32): the sums of a piece, not of the joined file.
SPLIT_VAR_ATTS = ("tessera_global_shape", "tessera_tile_start", "tessera_crc32")
SPLIT_GLOBAL_ATTS = ("tessera_split_rank", "tessera_split_nranks")
PIECE_RE = re.compile(r"^(?P<base>.+)\.(?P<rank>\d{4,})$")
#: split.c names a second tile extent of dimension D `D_t1`, a third `D_t2`, ...
RENAMED_DIM_RE = re.compile(r"^(?P<name>.+)_t\d+$")


class JoinError(Exception):
    """A problem with the input or output; the message names the file."""


def piece_path(base: str, rank: int) -> str:
    return f"{base}.{rank:04d}"


def base_of(arg: str) -> str:
    """The base path an argument names. A path whose `.0000` piece exists is a
    base even if it ends in digits (a file called `run.2026`); otherwise a
    `.NNNN` suffix marks a piece."""
    if os.path.exists(piece_path(arg, 0)):
        return arg
    m = PIECE_RE.match(arg)
    return m.group("base") if m else arg


def _open(path: str) -> netCDF4.Dataset:
    try:
        ds = netCDF4.Dataset(path, "r")
    except OSError as e:
        raise JoinError(f"{path}: cannot open as NetCDF: {e}") from None
    ds.set_auto_maskandscale(False)  # raw values: no masking, no unpacking
    ds.set_auto_chartostring(False)  # char arrays stay 'S1' arrays
    return ds


def _split_att(ds: netCDF4.Dataset, path: str, name: str) -> int:
    if name not in ds.ncattrs():
        raise JoinError(f"{path}: not a Tessera split piece (no global attribute {name})")
    try:
        return int(np.asarray(ds.getncattr(name)).ravel()[0])
    except (ValueError, TypeError, IndexError):
        raise JoinError(f"{path}: not a Tessera split piece ({name} is not an integer)") from None


def open_pieces(base: str) -> list:
    """Open `<base>.0000` .. `<base>.<n-1>` (n from piece 0), checking that each
    is a split piece of the same n with the rank its name says."""
    first = piece_path(base, 0)
    if not os.path.exists(first):
        raise JoinError(f"{first}: missing piece 0 (no such file)")
    pieces = []
    try:
        pieces.append(_open(first))
        nranks = _split_att(pieces[0], first, "tessera_split_nranks")
        if nranks < 1 or _split_att(pieces[0], first, "tessera_split_rank") != 0:
            raise JoinError(f"{first}: tessera_split_rank/nranks are not 0 and >= 1")
        _raise_fd_limit(nranks + 16)
        for rank in range(1, nranks):
            path = piece_path(base, rank)
            if not os.path.exists(path):
                raise JoinError(f"{path}: missing piece {rank} of {nranks} "
                                f"(tessera_split_nranks = {nranks} in {first})")
            ds = _open(path)
            pieces.append(ds)
            n = _split_att(ds, path, "tessera_split_nranks")
            if n != nranks:
                raise JoinError(f"{path}: tessera_split_nranks = {n}, but {first} says {nranks} "
                                "(pieces of different runs?)")
            r = _split_att(ds, path, "tessera_split_rank")
            if r != rank:
                raise JoinError(f"{path}: tessera_split_rank = {r}, expected {rank} from its name")
            if ds.data_model != pieces[0].data_model:
                raise JoinError(f"{path}: format {ds.data_model}, but {first} is "
                                f"{pieces[0].data_model}")
    except BaseException:
        for ds in pieces:
            ds.close()
        raise
    return pieces


def _raise_fd_limit(needed: int) -> None:
    """Every piece stays open while joining (one read per piece per frame);
    lift the soft open-file limit towards the hard one for many ranks."""
    try:
        import resource
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft != resource.RLIM_INFINITY and soft < needed:
            want = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    except (ImportError, ValueError, OSError):
        pass


def _merge_order(order: list, names) -> None:
    """Merge one piece's names into @p order: pieces may each lack some
    variables (empty tiles), so the file's order is rebuilt by inserting every
    unseen name right after its predecessor in that piece."""
    at = 0
    for name in names:
        if name in order:
            at = order.index(name) + 1
        else:
            order.insert(at, name)
            at += 1


def global_dim(ds: netCDF4.Dataset, name: str) -> str:
    """The file's name of piece dimension @p name: `D_t<k>` is a renamed D when
    the piece also has D (split.c always creates D first)."""
    m = RENAMED_DIM_RE.match(name)
    return m.group("name") if m and m.group("name") in ds.dimensions else name


def fill_value(var: dict):
    if "_FillValue" in var["atts"]:
        return var["atts"]["_FillValue"]
    return netCDF4.default_fillvals[var["dtype"].str[1:]]


def plan(pieces: list, paths: list) -> tuple:
    """Global dimensions and variables from all pieces, checked for agreement.
    Returns (dims: name -> size or None for the record dimension, nrec,
    vars: name -> info, dim order, var order)."""
    dims, vars_, dim_order, var_order, nrec = {}, {}, [], [], 0

    def set_dim(name, size, path, vname):
        if dims.setdefault(name, size) != size:
            raise JoinError(f"{path}: variable {vname}: dimension {name} is "
                            f"{'unlimited' if size is None else size}, but {dims[name]} elsewhere")

    for rank, (ds, path) in enumerate(zip(pieces, paths)):
        rec_dims = [d for d in ds.dimensions.values() if d.isunlimited()]
        piece_nrec = len(rec_dims[0]) if rec_dims else 0
        nrec = max(nrec, piece_nrec)
        _merge_order(dim_order, dict.fromkeys(global_dim(ds, d) for d in ds.dimensions))
        _merge_order(var_order, list(ds.variables))
        for name, pv in ds.variables.items():
            atts = {a: pv.getncattr(a) for a in pv.ncattrs()}
            rec = 1 if pv.dimensions and ds.dimensions[pv.dimensions[0]].isunlimited() else 0
            gdims = tuple(global_dim(ds, d) for d in pv.dimensions)
            decomposed = "tessera_global_shape" in atts
            if decomposed:
                gshape = tuple(int(x) for x in np.atleast_1d(atts["tessera_global_shape"]))
                start = tuple(int(x) for x in np.atleast_1d(atts.get("tessera_tile_start", [])))
                count = pv.shape[rec:]
                if not (len(gshape) == len(start) == len(count)) or any(
                        s < 0 or s + c > g for s, c, g in zip(start, count, gshape)):
                    raise JoinError(f"{path}: variable {name}: tile start {start} count {count} "
                                    f"does not fit tessera_global_shape {gshape}")
            else:
                gshape = pv.shape[rec:]
            if rec:
                set_dim(gdims[0], None, path, name)
            for d, size in zip(gdims[rec:], gshape):
                set_dim(d, size, path, name)
            var = vars_.setdefault(name, {
                "dtype": pv.dtype, "dims": gdims, "rec": rec, "gshape": gshape,
                "decomposed": decomposed, "tiles": [], "src": None, "pvars": [],
                "atts": {a: v for a, v in atts.items() if a not in SPLIT_VAR_ATTS}})
            if (var["dtype"], var["dims"], var["gshape"], var["decomposed"]) != (
                    pv.dtype, gdims, gshape, decomposed):
                raise JoinError(f"{path}: variable {name} differs from the other pieces "
                                f"(type, dimensions, global shape or decomposition)")
            var["pvars"].append(pv)  # for its storage (join_storage.py)
            if decomposed:
                var["tiles"].append((pv, tuple(slice(s, s + c) for s, c in zip(start, count)),
                                     piece_nrec))
            elif var["src"] is None:  # replicated: every piece has it whole; take the first
                var["src"] = (pv, piece_nrec)
        # A dimension no variable uses has its full size (split.c writes none,
        # but a piece made otherwise may); after the variables, which know better.
        for dname, d in ds.dimensions.items():
            if global_dim(ds, dname) == dname:
                dims.setdefault(dname, None if d.isunlimited() else len(d))
    return dims, nrec, vars_, dim_order, var_order


def _frame(var: dict, t, fill):
    """One frame (record t, or the whole variable when t is None) of a
    decomposed variable: holes no tile covers keep the fill value."""
    buf = np.full(var["gshape"], fill, dtype=var["dtype"])
    for pv, where, piece_nrec in var["tiles"]:
        if t is None:
            buf[where] = pv[...]
        elif t < piece_nrec:
            buf[where] = pv[t]
    return buf


def write_joined(pieces: list, paths: list, out_path: str) -> dict:
    dims, nrec, vars_, dim_order, var_order = plan(pieces, paths)
    first = pieces[0]
    out = netCDF4.Dataset(out_path, "w", format=first.data_model)
    try:
        out.set_fill_off()  # every value is written below; prefilling would write twice
        out.setncatts({a: first.getncattr(a) for a in first.ncattrs()
                       if a not in SPLIT_GLOBAL_ATTS})
        for d in dim_order:
            out.createDimension(d, dims[d])
        storages = []
        for name in var_order:
            var = vars_[name]
            atts = var["atts"]
            storage = variable_storage(var["pvars"], var["rec"], var["gshape"])
            storages.append(storage)
            try:  # netCDF4 accepts _FillValue and the storage only at creation
                ov = out.createVariable(name, var["dtype"], var["dims"],
                                        fill_value=atts.get("_FillValue"), **storage.kwargs)
                ov.setncatts(storage.atts)
            except (RuntimeError, ValueError) as e:
                raise JoinError(f"{paths[0]}: variable {name}: its storage "
                                f"({storage.description}) cannot be written here: {e}") from None
            ov.set_auto_maskandscale(False)
            ov.set_auto_chartostring(False)
            ov.setncatts({a: v for a, v in atts.items() if a != "_FillValue"})
        for name in var_order:
            var, ov = vars_[name], out.variables[name]
            fill = fill_value(var)
            frames = range(nrec) if var["rec"] else [None]
            for t in frames:
                if var["decomposed"]:
                    data = _frame(var, t, fill)
                else:
                    src, src_nrec = var["src"]
                    if t is None:
                        data = src[...]
                    elif t < src_nrec:
                        data = src[t]
                    else:
                        data = np.full(var["gshape"], fill, dtype=var["dtype"])
                if ov.ndim == 0:
                    ov.assignValue(data)
                elif np.asarray(data).size:
                    ov[... if t is None else t] = data
    finally:
        out.close()
    return {"variables": len(var_order), "records": nrec, "format": first.data_model,
            "storage": summary(storages)}


def default_out_dir(base: str) -> str:
    """The sibling directory of the pieces' directory: `<dir>-joined`."""
    pieces_dir = os.path.normpath(os.path.dirname(base) or ".")
    if pieces_dir in (".", os.sep):  # no name of its own to put a suffix on
        pieces_dir = os.path.abspath(pieces_dir)
    return pieces_dir.rstrip(os.sep) + "-joined"


def output_path(base: str, out_path: str = None, out_dir: str = None) -> str:
    """Where the joined file of @p base goes: @p out_path, else
    @p out_dir/<name>, else the default sibling directory/<name>. Refuses the
    pieces' own directory."""
    path = out_path or os.path.join(out_dir or default_out_dir(base), os.path.basename(base))
    pieces_dir = os.path.dirname(os.path.abspath(base))
    target_dir = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(target_dir) and os.path.samefile(target_dir, pieces_dir):
        raise JoinError(f"{path}: is beside the pieces in {pieces_dir}, where a glob such as "
                        f"`ncrcat {pieces_dir}/*` would read pieces and joined files together; "
                        f"join into another directory (default: {default_out_dir(base)})")
    return path


def join(base: str, out_path: str = None, force: bool = False, out_dir: str = None) -> tuple:
    """Join the pieces of @p base into @p out_path, or into @p out_dir (default:
    the sibling directory of the pieces' one), under the base's name.
    Returns (output path, {pieces, variables, records, format})."""
    out_path = output_path(base, out_path, out_dir)
    if os.path.exists(out_path) and not force:
        raise JoinError(f"{out_path}: exists; use --force to overwrite it")
    pieces = open_pieces(base)
    paths = [piece_path(base, r) for r in range(len(pieces))]
    # Written under a temporary name, renamed when complete: a failed join never
    # leaves a half-written file that looks like a result.
    tmp = f"{out_path}.join-tmp{os.getpid()}"
    try:
        os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
        info = write_joined(pieces, paths, tmp)
        os.replace(tmp, out_path)
    except OSError as e:
        raise JoinError(f"{out_path}: {e}") from None
    finally:
        for ds in pieces:
            ds.close()
        if os.path.exists(tmp):
            os.unlink(tmp)
    info["pieces"] = len(paths)
    return out_path, info


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="tessera join",
        description="Join the per-rank pieces of strategy=split output (<path>.NNNN) "
                    "into one NetCDF file per path.")
    parser.add_argument("inputs", nargs="+", metavar="PIECE_OR_PATH",
                        help="a base path or any of its pieces; several files may be given")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--out", metavar="DIR", help="directory of the joined files (default: "
                       "the sibling directory <pieces' directory>-joined; never the pieces' own)")
    where.add_argument("-o", "--output", metavar="FILE", help="output file (only when joining "
                       "one file; not in the pieces' directory)")
    parser.add_argument("--force", action="store_true", help="overwrite an existing output")
    parser.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    bases = list(dict.fromkeys(base_of(a) for a in args.inputs))
    if args.output and len(bases) > 1:
        print(f"tessera join: -o names one output, but the inputs are {len(bases)} files: "
              + ", ".join(bases), file=sys.stderr)
        return 2
    for base in bases:
        try:
            out, info = join(base, args.output, args.force, args.out)
        except JoinError as e:
            print(f"tessera join: {e}", file=sys.stderr)
            return 1
        if not args.quiet:
            kept = f"; {info['storage']}" if info["storage"] else ""
            print(f"joined {info['pieces']} pieces -> {out} ({info['variables']} variables, "
                  f"{info['records']} records, {info['format']}{kept})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
