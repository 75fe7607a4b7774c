"""A Zarr v3 store that Tessera wrote (format=zarr, docs/zarr.md), read for
`tessera verify` and `tessera follow`.

A store is a directory with a `zarr.json`; its root group's attribute
`_nc_tessera_layout` names the record dimension (`unlimited`), which Zarr
itself cannot say. The values come from zarr-python (the tools' `test`
extra, `pip install zarr`): it decodes every codec Tessera writes (bytes,
gzip, zstd, sharding), so what is summed is what any reader gets back.
"""
from __future__ import annotations

import json
import os

#: The root group attribute Tessera's writer adds (src/backend/zarr_meta.h).
LAYOUT_ATT = "_nc_tessera_layout"


def is_store(path: str) -> bool:
    """Whether `path` is a Zarr store (a directory holding zarr.json)."""
    return os.path.isdir(path) and os.path.isfile(os.path.join(path, "zarr.json"))


def record_dim(path: str) -> str | None:
    """The record dimension's name from the root group's layout attribute;
    None for a store without one (one xarray wrote) or without a record
    dimension. Needs no zarr-python."""
    with open(os.path.join(path, "zarr.json"), encoding="utf-8") as fh:
        doc = json.load(fh)
    layout = doc.get("attributes", {}).get(LAYOUT_ATT) or {}
    return layout.get("unlimited") if isinstance(layout, dict) else None


class Store:
    """The arrays of a store: their text attributes and each frame's values.
    Raises ImportError naming the package when zarr-python is missing,
    ValueError when zarr-python cannot open the store."""

    def __init__(self, path: str):
        try:
            import zarr  # optional: only stores need it
        except ImportError:
            raise ImportError("reading a Zarr store needs zarr-python (pip install 'zarr>=3')") \
                from None
        self.path = path
        self.record = record_dim(path)
        try:
            self.group = zarr.open_group(path, mode="r", zarr_format=3)
            self.arrays = dict(self.group.arrays())
        except Exception as e:  # zarr-python's errors have no common base
            raise ValueError(f"not a Zarr v3 store ({type(e).__name__}: {e})") from None

    def text_attribute(self, name: str) -> dict:
        """array -> the text of attribute `name`, for the arrays that have it."""
        return {n: str(a.attrs[name]) for n, a in self.arrays.items() if name in a.attrs}

    def is_record(self, name: str) -> bool:
        dims = self.arrays[name].metadata.dimension_names or ()
        return self.record is not None and len(dims) > 0 and dims[0] == self.record

    def frame_values(self, name: str, frame: int):
        """The values of `name` at `frame` (all of a fixed array), decoded."""
        a = self.arrays[name]
        return a[frame] if self.is_record(name) else a[...]

    def close(self) -> None:
        """Nothing to let go: zarr-python opens each chunk as it reads it."""
