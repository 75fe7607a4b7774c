"""How `tessera join` stores each variable: the pieces' compression, shuffle,
checksum, byte order, quantization and chunk shape, carried over to the joined
NetCDF-4 file (see docs/join.md, "Storage").

Without this, netCDF4-python's defaults (no filters, its own chunk guess) made
the join of `format=netcdf4:deflate=1` split output 4.6 times larger than the
same run written with strategy=serial.

The settings are read from the pieces with netCDF4-python (`filters()`,
`chunking()`, `quantization()`, `endian()`) and turned into createVariable
arguments. Only chunk lengths need thought: a piece's chunk that spans its
tile's whole extent in a dimension (the `chunks=auto` level, or a length
clipped to a small tile) spans the whole dimension in the joined file, as
serial's does; a shorter one (an explicit `chunks=` length) is kept.
"""
from __future__ import annotations

import numpy as np

#: netCDF4-python's quantize modes -> the `quantize=` hint's names (docs/hints.md).
QUANTIZE_HINT = {"BitGroom": "bitgroom", "BitRound": "bitround",
                 "GranularBitRound": "granularbr"}
#: netCDF-C's attribute recording BitGroom (written by nc_def_var_quantize).
BITGROOM_ATT = "_QuantizeBitGroomNumberOfSignificantDigits"


class Storage:
    """One variable's storage: the createVariable keyword arguments, attributes
    to set after creation, and a short description in the hints' words."""

    def __init__(self, kwargs: dict, atts: dict, description: str):
        self.kwargs, self.atts, self.description = kwargs, atts, description


def _compression(filters: dict) -> tuple:
    """(createVariable arguments, hint-like words) for the compressor and
    shuffle of one piece variable's `filters()`."""
    kw, words = {}, []
    level = int(filters.get("complevel") or 0)
    if filters.get("zlib"):
        kw.update(compression="zlib", complevel=level)
        words.append(f"deflate={level}")
    elif filters.get("zstd"):
        kw.update(compression="zstd", complevel=level)
        words.append(f"zstd={level}")
    elif filters.get("bzip2"):
        kw.update(compression="bzip2", complevel=level)
        words.append(f"bzip2={level}")
    elif filters.get("szip"):
        szip = filters["szip"]
        kw.update(compression="szip", szip_coding=szip["coding"],
                  szip_pixels_per_block=szip["pixels_per_block"])
        words.append(f"szip={szip['coding']}:{szip['pixels_per_block']}")
    elif filters.get("blosc"):
        blosc = filters["blosc"]
        kw.update(compression=blosc["compressor"], complevel=level,
                  blosc_shuffle=blosc["shuffle"])
        words.append(f"{blosc['compressor']}={level}")
    kw["shuffle"] = bool(filters.get("shuffle"))
    if kw["shuffle"]:
        words.append("shuffle")
    if filters.get("fletcher32"):
        kw["fletcher32"] = True
        words.append("fletcher32")
    return kw, words


def _chunks(tiles: list, rec: int, gshape: tuple):
    """The joined chunk shape from each piece's (chunking, shape), or
    'contiguous'. A dimension where every piece's chunk spans its tile gets
    the global extent; otherwise the longest piece chunk, clipped to it."""
    if any(c == "contiguous" for c, _ in tiles):
        return "contiguous"
    full = (None,) * rec + tuple(gshape)
    out = []
    for i, extent in enumerate(full):
        lengths = [c[i] for c, _ in tiles]
        if extent is None:  # record dimension: the pieces' records per chunk
            out.append(max(lengths))
        elif all(c[i] >= shape[i] for c, shape in tiles):
            out.append(max(1, extent))
        else:
            out.append(max(1, min(max(lengths), extent)))
    return out


def variable_storage(pvars: list, rec: int, gshape: tuple) -> Storage:
    """The storage of one variable from its piece variables @p pvars (every
    piece that holds it; the first one's filters, as every piece was written
    with the same hints), with @p rec record dimensions (0 or 1) and the
    global non-record shape @p gshape."""
    first = pvars[0]
    if first.chunking() is None:  # classic formats: nothing to keep
        return Storage({}, {}, "")
    kw, words = _compression(first.filters() or {})
    atts = {}
    endian = first.endian()
    if endian != "native":
        kw["endian"] = endian
    quant = first.quantization() if first.dtype.kind == "f" else None
    if quant:
        nsd, mode = quant
        if mode == "BitGroom":
            # The values are already groomed, and grooming again is not a no-op:
            # it shaves even and sets odd positions of each write, and a tile's
            # positions change parity in the joined frame. So the values are
            # copied as they are and only netCDF-C's record of the mode is set.
            atts[BITGROOM_ATT] = np.int32(nsd)
        else:
            # BitRound and GranularBitRound leave rounded values unchanged, so
            # netCDF-C quantizes again (a no-op) and records the mode itself.
            kw.update(significant_digits=int(nsd), quantize_mode=mode)
        words.append(f"quantize={QUANTIZE_HINT.get(mode, mode)}:{nsd}")
    # A scalar is always contiguous: nothing to choose or to say.
    chunks = _chunks([(pv.chunking(), pv.shape) for pv in pvars], rec, gshape) \
        if first.ndim else []
    if chunks == "contiguous":
        kw["contiguous"] = True
        words.append("contiguous")
    elif len(chunks):
        kw["chunksizes"] = chunks
    return Storage(kw, atts, ":".join(words) or "no filters")


def summary(storages: list) -> str:
    """`storage kept: deflate=1:shuffle (36 variables)`, one entry per distinct
    setting, most common first; empty for classic files."""
    counts = {}
    for s in storages:
        if s.description:
            counts[s.description] = counts.get(s.description, 0) + 1
    if not counts:
        return ""
    parts = [f"{d} ({n} variable{'s' if n != 1 else ''})"
             for d, n in sorted(counts.items(), key=lambda kv: -kv[1])]
    return "storage kept: " + ", ".join(parts)
