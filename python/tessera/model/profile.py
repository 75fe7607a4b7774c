"""Machine profiles: the parameters of the cost model (docs/model.md).

A profile is a JSON object. Every cost the model predicts is a sum of
*amounts* (bytes copied, messages received, queue entries searched, bytes
written by one stream, ...) times one of the parameters below, so a profile is
also what `tessera model calibrate` fits by non-negative least squares. The
parameters are stored as rates and latencies (what a person reads and writes
by hand); PARAMS maps each to the per-unit cost the equations use.

Profiles shipped with Tessera live in python/tessera/profiles/ and are found by
name (`--profile irma`, or `irma.json`, `profiles/irma`); any other path is read
as a file.
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field

#: The package tessera.profiles, beside this room (python/tessera/profiles).
PROFILE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "profiles")


@dataclass(frozen=True)
class Param:
    key: str        # JSON key
    unit: str       # unit of the stored value
    inverse: bool   # stored as a rate (B/s): the per-unit cost is 1/value
    meaning: str


#: The model's parameters, in the order of the feature vector.
PARAMS = (
    Param("copy_bw", "B/s", True, "one rank copying memory (pack, unpack, buffer a tile)"),
    Param("net_bw", "B/s", True, "bytes one rank receives per second (point to point)"),
    Param("msg_s", "s", False, "fixed cost of one message at the receiver"),
    Param("match_s", "s", False, "one posted-receive entry searched; a fan-in of m messages "
                                 "searches m*(m+1)/2"),
    Param("coll_s", "s", False, "one stage of a small collective (an agreement costs "
                                "ceil(log2 P) stages)"),
    Param("write_bw", "B/s", True, "one writer stream to the file system"),
    Param("fs_bw", "B/s", True, "the file system for all writers together (saturation)"),
    Param("req_s", "s", False, "one write request issued by a writer"),
    Param("file_s", "s", False, "create + close of one file (metadata)"),
    Param("open_s", "s", False, "one more process opening a shared file, or one more file "
                                "created at once (metadata server load)"),
    Param("slice_s", "s", False, "waiting for a peer that is not running, per message or "
                                 "collective stage, when processes outnumber cores"),
    Param("piece_s", "s", False, "one contiguous file piece of a non-contiguous collective "
                                 "write, as MPI-IO's aggregator lists, sorts and copies it"),
    Param("mpiio_bw", "B/s", True, "what a byte written through MPI-IO (PnetCDF's collective "
                                   "writes) costs beyond write_bw (0: nothing more)"),
    # Not fitted with the others: `calibrate` measures it from a pair of
    # serial runs (deflate.measure). 0 = unknown, and the model refuses
    # to price a compressed case rather than guess (deflate.require).
    Param("deflate_bw", "B/s", True, "one writer compressing NetCDF-4 chunks with zlib (deflate "
                                     "level 1), input bytes per second, beyond writing them "
                                     "uncompressed (0: unknown)"),
)
KEYS = tuple(p.key for p in PARAMS)
#: Parameters a profile may leave out (absent = unknown, not 0 = free).
OPTIONAL = ("deflate_bw",)


@dataclass
class Profile:
    name: str
    values: dict                       # PARAMS key -> stored value (rate or seconds)
    cores: int = 0                     # cores the job may use (0: one core per rank)
    cb_nodes: int = 0                  # MPI-IO aggregators of a shared-file collective write
                                       # (0: the MPI-IO's default, strategy.cb_nodes)
    cb_buffer_bytes: int = 16 << 20    # MPI-IO two-phase buffer per aggregator
    mpi_yield: bool = True             # waiting ranks yield their core once processes
                                       # outnumber cores (Open MPI); else they spin
    stripe_count: int = 0              # storage targets (Lustre OSTs) one shared file may be
                                       # striped over (0: unknown, or not a striped file
                                       # system); no cost term, `advise` names striping
    description: str = ""
    source: str = ""
    fitted: list = field(default_factory=list)   # what the values were fitted from

    def unit_cost(self, key: str) -> float:
        """Seconds per unit of amount `key` (1/rate for rates)."""
        p = next(p for p in PARAMS if p.key == key)
        v = float(self.values.get(key, 0.0) or 0.0)
        if p.inverse:
            return 1.0 / v if v > 0 else 0.0
        return v

    def theta(self) -> list:
        return [self.unit_cost(k) for k in KEYS]

    def contention(self, processes: int, busy: int, background: float = 0.0) -> tuple:
        """(stretch, descheduled) for output work while `busy` of our
        `processes` have work and `background` other processes are busy.
        Ranks waiting in MPI spin, and so compete for the cores like busy
        ones, unless the MPI library yields them: Open MPI does once the
        processes outnumber the cores. CPU work stretches by the runnable
        processes per core; a peer is not running when needed with the
        chance that a runnable process has no core."""
        if self.cores <= 0:
            return 1.0, 0.0
        spin = not (self.mpi_yield and processes > self.cores)
        runnable = (processes if spin else busy) + background
        return max(1.0, runnable / self.cores), max(0.0, 1.0 - self.cores / max(runnable, 1e-9))

    def oversubscription(self, processes: int, background: float = 0.0) -> float:
        return self.contention(processes, processes, background)[0]

    def to_json(self) -> dict:
        d = asdict(self)
        if not d["stripe_count"]:
            del d["stripe_count"]      # profiles without it stay as they were
        d["tessera_profile"] = 1
        return d


def from_theta(theta, base: Profile) -> Profile:
    """A copy of `base` with the parameters set from per-unit costs."""
    values = {}
    for p, t in zip(PARAMS, theta):
        t = float(t)
        if p.key in OPTIONAL and p.key not in base.values and t <= 0:
            continue            # unknown stays absent, as the profile had it
        values[p.key] = (1.0 / t if t > 0 else 0.0) if p.inverse else t
    return Profile(name=base.name, values=values, cores=base.cores, cb_nodes=base.cb_nodes,
                   cb_buffer_bytes=base.cb_buffer_bytes, mpi_yield=base.mpi_yield,
                   stripe_count=base.stripe_count, description=base.description,
                   source=base.source, fitted=list(base.fitted))


def names() -> list:
    """The profiles shipped with the package."""
    try:
        return sorted(f[:-5] for f in os.listdir(PROFILE_DIR) if f.endswith(".json"))
    except OSError:
        return []


def shipped_path(name_or_path: str) -> str | None:
    """The shipped profile a name stands for, or None: `here`, `here.json`,
    `profiles/here` and `python/tessera/profiles/here.json` all name
    profiles/here.json (never profiles/here.json.json); a path into any other
    folder names no shipped profile."""
    folder, base = os.path.split(os.path.normpath(name_or_path))
    if folder not in ("", "profiles") and \
            os.path.realpath(folder) != os.path.realpath(PROFILE_DIR):
        return None
    stem = base[:-len(".json")] if base.endswith(".json") else base
    path = os.path.join(PROFILE_DIR, stem + ".json")
    return path if stem and os.path.isfile(path) else None


def load(name_or_path: str) -> Profile:
    """A profile by JSON file or shipped name; ValueError with one sentence
    naming the profile (and the shipped ones) when it is neither, or not a
    profile."""
    path = name_or_path
    if not os.path.isfile(path):
        path = shipped_path(name_or_path)
        if path is None:
            what = "a folder, not a profile file" if os.path.isdir(name_or_path) else \
                "no such file"
            raise ValueError(f"profile '{name_or_path}': {what}, and not a shipped "
                             f"profile ({', '.join(names()) or 'none installed'})")
    try:
        with open(path, encoding="utf-8") as fh:
            d = json.load(fh)
    except json.JSONDecodeError as e:
        raise ValueError(f"profile {path}: not JSON ({e.msg}, line {e.lineno})") from None
    if not isinstance(d, dict) or not isinstance(d.get("values", {}), dict):
        raise ValueError(f"profile {path}: not a Tessera profile (docs/model.md)")
    unknown = set(d.get("values", {})) - set(KEYS)
    if unknown:
        raise ValueError(f"{path}: unknown parameters {sorted(unknown)}")
    return Profile(name=d.get("name", os.path.basename(path)), values=dict(d.get("values", {})),
                   cores=int(d.get("cores", 0)), cb_nodes=int(d.get("cb_nodes", 0)),
                   cb_buffer_bytes=int(d.get("cb_buffer_bytes", 16 << 20)),
                   mpi_yield=bool(d.get("mpi_yield", True)),
                   stripe_count=int(d.get("stripe_count", 0)),
                   description=d.get("description", ""), source=d.get("source", ""),
                   fitted=list(d.get("fitted", [])))


def save(profile: Profile, path: str) -> str:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(profile.to_json(), fh, indent=2)
        fh.write("\n")
    return path


def describe(profile: Profile) -> str:
    lines = [f"profile {profile.name}: {profile.description}".rstrip(": ")]
    for p in PARAMS:
        v = float(profile.values.get(p.key, 0.0) or 0.0)
        if p.inverse:
            text = f"{v / 1e6:.1f} MB/s" if v > 0 else "unlimited"
        else:
            text = f"{v * 1e6:.3f} us"
        lines.append(f"  {p.key:<9} {text:>16}  {p.meaning}")
    lines.append(f"  cores {profile.cores or 'one per rank'}, cb_nodes "
                 f"{profile.cb_nodes or 'every writer'}, cb_buffer "
                 f"{profile.cb_buffer_bytes >> 20} MiB"
                 + (f", striped over up to {profile.stripe_count} storage targets"
                    if profile.stripe_count else ""))
    return "\n".join(lines)
