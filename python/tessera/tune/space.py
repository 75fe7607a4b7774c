"""Search space of `tessera tune`: knobs, their ranges, and hint strings.

A configuration is a strategy plus explicit values for some knobs; a knob that
is not set keeps the library's default. Ranges are derived from the first
(default) run: the rank count bounds aggregators and cb_nodes, the file size
bounds buffer and slab sizes, so the search never spends trials on values that
cannot matter for this run. `--space FILE` (TOML) narrows or widens the result.
"""
from __future__ import annotations

import fnmatch
import re
import tomllib
from dataclasses import dataclass, field, replace

from ..stats.rules import ALIGN_VAR_FACTOR
from ..strategies import ROWS, in_order, reserves_servers

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB

#: Strategies in the order the strategy pass tries them (cheapest to set up
#: first: their rows' tune_order).
ALL_STRATEGIES = tuple(r.name for r in in_order("tune_order"))

#: Staging knobs (docs/staging.md): every strategy stages; they exist only when
#: the tuner is given a fast tier (`--stage-dir`).
STAGE_KNOBS = ("stage", "stage_min_bytes", "stage_format")

#: Which knobs matter for which strategy (its row's tune_knobs; docs/tuning.md
#: explains each).
STRATEGY_KNOBS = {r.name: r.tune_knobs + STAGE_KNOBS for r in ROWS}


def tuned_by(knob: str) -> frozenset:
    """The strategies whose rows tune `knob`."""
    return frozenset(s for s, names in STRATEGY_KNOBS.items() if knob in names)

#: A file is "small" when the largest file of the run is at least this many
#: times larger (the ExPBB case: a 22 KB namelist next to GB history files).
SMALL_FILE_RATIO = 16


class SpaceError(ValueError):
    """A --space file or a size that cannot be understood."""


def parse_size(value) -> int:
    """Byte size from an int or a string with an optional k/m/g suffix (powers of 1024)."""
    if isinstance(value, bool):
        raise SpaceError(f"not a size: {value!r}")
    if isinstance(value, int):
        return value
    m = re.fullmatch(r"\s*(\d+)\s*([kKmMgG]?)[bB]?\s*", str(value))
    if not m:
        raise SpaceError(f"not a size: {value!r}")
    scale = {"": 1, "k": KIB, "m": MIB, "g": GIB}[m.group(2).lower()]
    return int(m.group(1)) * scale


def format_size(n: int) -> str:
    """Shortest exact k/m/g spelling of a size, as Tessera's own size hints accept."""
    for suffix, scale in (("g", GIB), ("m", MIB), ("k", KIB)):
        if n >= scale and n % scale == 0:
            return f"{n // scale}{suffix}"
    return str(n)


def human_size(n: float) -> str:
    """Approximate size for people (tables), not for hint strings."""
    for suffix, scale in (("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if abs(n) >= scale:
            return f"{n / scale:.1f} {suffix}"
    return f"{int(n)} B"


@dataclass(frozen=True)
class Knob:
    """One tunable hint.

    `default` is the value the library uses when the key is not set (None when
    the tuner cannot know it, e.g. ROMIO's cb_nodes). For ordered knobs the
    neighbours of a value are the adjacent entries of `values`; for unordered
    ones (choices) every other value is a neighbour.
    """

    name: str
    key: str
    values: tuple
    default: object = None
    ordered: bool = True
    size: bool = False
    #: handed to MPI_Info verbatim, and ROMIO reads plain integers only
    passthrough: bool = False
    strategies: frozenset = frozenset()

    def fmt(self, value) -> str:
        if self.size and not self.passthrough:
            return format_size(int(value))
        return str(value)

    def coerce(self, value):
        """A value read from TOML or a session file, in this knob's type."""
        if self.size:
            return parse_size(value)
        if all(isinstance(v, int) for v in self.values) and self.values:
            try:
                return int(value)
            except (TypeError, ValueError):
                raise SpaceError(f"knob {self.name}: {value!r} is not an integer") from None
        return value


@dataclass(frozen=True)
class Config:
    """A strategy and the knobs set explicitly; strategy None is the baseline."""

    strategy: str | None
    settings: tuple = ()  # ((knob name, value), ...) in the space's knob order
    baseline: str = ""    # hint text of the baseline (strategy None) configuration

    def get(self, name, fallback=None):
        for k, v in self.settings:
            if k == name:
                return v
        return fallback

    def is_baseline(self) -> bool:
        return self.strategy is None


@dataclass(frozen=True)
class RunShape:
    """What the default run tells about the job: the ranges depend on it."""

    ranks: int = 1               # model ranks (stats `model_ranks`)
    file_bytes: int = 0          # largest single file (stats `bytes`)
    total_bytes: int = 0         # all files of the run
    stripe_size: int = 0         # stats `stripe_size`, 0 when unknown
    server_ranks: int = 0        # --ranks-for-servers
    var_bytes: int = 0           # one variable in one frame (smallest file), 0 unknown
    small_file_bytes: int = 0    # largest "small" file (SMALL_FILE_RATIO), 0 none
    stage_dir: str = ""          # --stage-dir: the fast tier trials may stage into


@dataclass
class Space:
    """The strategies and knobs one tuning session searches."""

    shape: RunShape
    strategies: list
    knobs: dict                      # name -> Knob, in a stable order
    fixed: str = ""                  # hints prepended to every trial
    glob: str = ""                   # file glob the trial hints apply to ("" = all files)
    baseline: str = ""               # hints of the default configuration
    strategy_knobs: dict = field(default_factory=dict)

    # -- configurations ----------------------------------------------------
    def baseline_config(self) -> Config:
        return Config(None, (), self.baseline)

    def start_config(self, strategy: str) -> Config:
        """The strategy with the library's defaults, plus what it cannot run without."""
        if reserves_servers(strategy):
            s = max(1, self.shape.server_ranks)
            return self.make(strategy, {"io_groups": 1, "io_tasks": s})
        return self.make(strategy, {})

    def make(self, strategy: str, values: dict) -> Config:
        order = [n for n in self.knobs if n in values]
        return Config(strategy, tuple((n, values[n]) for n in order))

    def with_value(self, cfg: Config, name: str, value) -> Config:
        values = dict(cfg.settings)
        knob = self.knobs[name]
        if name in ("io_groups", "io_tasks") and self.shape.server_ranks > 0:
            # Groups x tasks must fit the server ranks: growing one coordinate
            # shrinks the other, so the search can move ranks between them.
            other = "io_tasks" if name == "io_groups" else "io_groups"
            values[other] = max(1, min(values.get(other, 1), self.shape.server_ranks // value))
        # Setting a knob to the library default explicitly changes nothing but the
        # string; dropping it keeps one spelling per configuration (and one cache key).
        if value == knob.default and name not in ("io_groups", "io_tasks"):
            values.pop(name, None)
        else:
            values[name] = value
        # A threshold means nothing without a stage: setting one stages (hybrid
        # placement in one move, since staging everything may be what is slow);
        # turning the stage off drops it.
        # The same holds for the stage's layout (stage_format=log).
        if name in ("stage_min_bytes", "stage_format") and name in values \
                and "stage" in self.knobs:
            values.setdefault("stage", self.shape.stage_dir)
        if name == "stage" and values.get("stage") is None:
            values.pop("stage_min_bytes", None)
            values.pop("stage_format", None)
        return self.make(cfg.strategy, values)

    def knobs_for(self, strategy: str) -> list:
        names = self.strategy_knobs.get(strategy, ())
        return [n for n in names if n in self.knobs and strategy in self.knobs[n].strategies]

    def valid(self, cfg: Config) -> bool:
        """Whether the library would accept the combination (saves failing trials)."""
        if cfg.is_baseline():
            return True
        p = max(1, self.shape.ranks)
        aggs = cfg.get("aggregators", max(1, p // 4))
        if aggs > p:
            return False
        stride = cfg.get("stride")
        if stride and stride * (aggs - 1) >= p:
            return False
        if cfg.get("cb_nodes", 1) > p:
            return False
        if cfg.get("stage") is None and (cfg.get("stage_min_bytes") is not None
                                         or cfg.get("stage_format") is not None):
            return False
        if reserves_servers(cfg.strategy):
            g, t = cfg.get("io_groups", 1), cfg.get("io_tasks", 1)
            if g * t > max(1, self.shape.server_ranks):
                return False
        return True

    def hints(self, cfg: Config) -> str:
        """The TESSERA_HINTS text of a configuration."""
        if cfg.is_baseline():
            body = cfg.baseline
        else:
            parts = [f"strategy={cfg.strategy}"]
            for name, value in cfg.settings:
                knob = self.knobs[name]
                parts.append(f"{knob.key}={knob.fmt(value)}")
            body = ":".join(parts)
            if self.glob:
                body = f"{self.glob}:{body}"
        # Unglobbed groups apply in order, so "fixed,body" keeps the trial's keys on
        # top; one group ("fixed:body") reads better when nothing is globbed.
        sep = "," if (self.glob or cfg.is_baseline()) else ":"
        return sep.join(p for p in (self.fixed, body) if p)

    def label(self, cfg: Config) -> str:
        """Short text for tables: the trial's own settings, without fixed hints."""
        if cfg.is_baseline():
            return f"(default{': ' + cfg.baseline if cfg.baseline else ''})"
        parts = [cfg.strategy] + [f"{self.knobs[n].key}={self.knobs[n].fmt(v)}"
                                  for n, v in cfg.settings]
        return ":".join(parts)

    # -- neighbourhoods for the coordinate search ------------------------------
    def neighbours(self, cfg: Config, name: str, direction: int) -> list:
        """Values one step from cfg's value of knob `name`: up (+1), down (-1), or
        every other value (0, unordered knobs)."""
        knob = self.knobs[name]
        current = cfg.get(name, knob.default)
        vals = list(knob.values)
        if not knob.ordered:
            return [v for v in vals if v != current] if direction >= 0 else []
        if current in vals:
            i = vals.index(current)
            j = i + direction
            return [vals[j]] if 0 <= j < len(vals) else []
        if current is None:
            # Library default unknown (e.g. ROMIO's cb_nodes): try the smallest value
            # downwards and the middle of the range upwards; later steps are adjacent.
            if direction < 0:
                return vals[:1]
            return [vals[len(vals) // 2]] if len(vals) > 1 else []
        # The default lies between two listed values: step to the nearest one.
        if direction > 0:
            above = [v for v in vals if v > current]
            return above[:1]
        below = [v for v in vals if v < current]
        return below[-1:]


# -- building the space from a run ---------------------------------------------
def _pow2_upto(n: int) -> list:
    out, v = [], 1
    while v <= n:
        out.append(v)
        v *= 2
    if n >= 1 and n not in out:
        out.append(n)
    return out


def _geometric(lo: int, hi: int, factor: int) -> list:
    out, v = [], lo
    while v <= hi:
        out.append(v)
        v *= factor
    return out


def _ceil_pow(n: int, lo: int, factor: int) -> int:
    v = lo
    while v < n:
        v *= factor
    return v


def default_knobs(shape: RunShape) -> dict:
    """The knobs and ranges for a run of this shape (defaults from src/core/hints.h)."""
    p = max(1, shape.ranks)
    fbytes = max(shape.file_bytes, 1)
    per_rank = max(shape.total_bytes // p, 1)
    stripe = shape.stripe_size or MIB
    knobs = [
        Knob("aggregators", "aggregators", tuple(_pow2_upto(p)), max(1, p // 4),
             strategies=tuned_by("aggregators")),
        # stride unset = writers spread evenly; 1 packs them on the first ranks (one node)
        Knob("stride", "stride", tuple(v for v in (1, 2) if v < p), None, ordered=False,
             strategies=tuned_by("stride")),
        Knob("exchange", "exchange", ("p2p", "alltoall"), "p2p", ordered=False,
             strategies=tuned_by("exchange")),
        Knob("cb_nodes", "cb_nodes", tuple(_pow2_upto(p)), None, passthrough=True,
             strategies=tuned_by("cb_nodes")),
        Knob("cb_buffer_size", "cb_buffer_size",
             tuple(_geometric(MIB, max(16 * MIB, _ceil_pow(fbytes, MIB, 4)), 4)[:6]),
             16 * MIB, size=True, passthrough=True, strategies=tuned_by("cb_buffer_size")),
        Knob("striping_unit", "striping_unit",
             tuple(_geometric(64 * KIB, max(4 * MIB, min(64 * MIB, fbytes)), 4)),
             shape.stripe_size or None, size=True, passthrough=True,
             strategies=tuned_by("striping_unit")),
        # PnetCDF's variable alignment: aligned variables start on stripe boundaries.
        # Only alignments small next to the variables (as tessera stats advises):
        # padding 202 small WRF variables to 1 MiB would multiply the file size.
        Knob("alignment", "nc_var_align_size",
             tuple(v for v in sorted({4 * KIB, 64 * KIB, MIB, stripe})
                   if not shape.var_bytes or v * ALIGN_VAR_FACTOR <= shape.var_bytes),
             None, size=True, passthrough=True, strategies=tuned_by("alignment")),
        Knob("buffer_bytes", "buffer_bytes",
             tuple(_geometric(8 * MIB, max(128 * MIB, min(2 * GIB, 4 * per_rank)), 4)),
             128 * MIB, size=True, strategies=tuned_by("buffer_bytes")),
        Knob("slab_bytes", "slab_bytes",
             tuple(_geometric(4 * MIB, max(64 * MIB, min(GIB, _ceil_pow(fbytes, 4 * MIB, 4))),
                              4)),
             64 * MIB, size=True, strategies=tuned_by("slab_bytes")),
    ]
    if shape.server_ranks > 0:
        s = shape.server_ranks
        knobs[:0] = [
            Knob("io_groups", "io_groups", tuple(range(1, s + 1)), 1,
                 strategies=tuned_by("io_groups")),
            Knob("io_tasks", "io_tasks", tuple(range(1, s + 1)), 1,
                 strategies=tuned_by("io_tasks")),
            Knob("backend", "backend", ("netcdf", "pnetcdf"), None, ordered=False,
                 strategies=tuned_by("backend")),
        ]
    if shape.stage_dir:
        knobs += stage_knobs(shape)
    return {k.name: k for k in knobs if k.values}


def stage_knobs(shape: RunShape) -> list:
    """Stage on/off, the hybrid threshold and the stage's layout. `stage` off is
    the key unset (the library writes in place); on is `stage_dir=<--stage-dir>`.
    The threshold's first value lies just above the run's small files, so the
    rule's one step up (rules) places exactly those on the final file
    system. `stage_format=log` appends blocks to per-writer logs in the stage
    and converts them while draining (docs/staging.md)."""
    largest = max(shape.file_bytes, 1)
    if shape.small_file_bytes:
        lo = max(4 * KIB, 1 << shape.small_file_bytes.bit_length())  # power of 2 above
    else:
        lo = MIB
    return [
        Knob("stage", "stage_dir", (None, shape.stage_dir), None, ordered=False,
             strategies=tuned_by("stage")),
        Knob("stage_min_bytes", "stage_min_bytes",
             tuple(v for v in _geometric(lo, largest, 4) if v <= largest), 0, size=True,
             strategies=tuned_by("stage_min_bytes")),
        Knob("stage_format", "stage_format", ("native", "log"), "native", ordered=False,
             strategies=tuned_by("stage_format")),
    ]


def build_space(shape: RunShape, strategies=None, overrides: dict | None = None,
                fixed: str = "", glob: str = "", baseline: str = "") -> Space:
    """The space for this run, with --strategies and a --space file applied."""
    knobs = default_knobs(shape)
    chosen = list(strategies) if strategies else [
        s for s in ALL_STRATEGIES if not reserves_servers(s) or shape.server_ranks > 0]
    space = Space(shape, chosen, knobs, fixed=fixed, glob=glob, baseline=baseline,
                  strategy_knobs={s: list(v) for s, v in STRATEGY_KNOBS.items()})
    if overrides:
        apply_overrides(space, overrides)
    for s in space.strategies:
        if s not in STRATEGY_KNOBS:
            raise SpaceError(f"unknown strategy {s!r} (known: {', '.join(ALL_STRATEGIES)})")
    if any(reserves_servers(s) for s in space.strategies) and shape.server_ranks <= 0:
        raise SpaceError("strategy servers needs --ranks-for-servers N")
    return space


def load_space_file(path: str) -> dict:
    with open(path, "rb") as fh:
        try:
            return tomllib.load(fh)
        except tomllib.TOMLDecodeError as exc:
            raise SpaceError(f"{path}: {exc}") from None


def apply_overrides(space: Space, spec: dict) -> None:
    """Apply a parsed --space file (format in docs/tuning.md)."""
    unknown = set(spec) - {"strategies", "knobs", "fixed"}
    if unknown:
        raise SpaceError(f"--space: unknown section(s) {sorted(unknown)}")
    if "strategies" in spec:
        space.strategies = [str(s) for s in spec["strategies"]]
    if "fixed" in spec:
        space.fixed = ":".join(p for p in (space.fixed, str(spec["fixed"])) if p)
    for name, kspec in spec.get("knobs", {}).items():
        if not isinstance(kspec, dict):
            raise SpaceError(f"--space: [knobs.{name}] must be a table")
        if kspec.get("enabled", True) is False:
            space.knobs.pop(name, None)
            continue
        knob = space.knobs.get(name)
        if knob is None:
            # A new knob: any hint key (e.g. an MPI-IO pass-through like romio_cb_write).
            strategies = frozenset(kspec.get("strategies", space.strategies))
            knob = Knob(name, str(kspec.get("key", name)), (), None,
                        ordered=bool(kspec.get("ordered", False)),
                        size=bool(kspec.get("size", False)),
                        passthrough=bool(kspec.get("passthrough", True)),
                        strategies=strategies)
            for s in strategies:
                space.strategy_knobs.setdefault(s, [])
                if name not in space.strategy_knobs[s]:
                    space.strategy_knobs[s].append(name)
        if "values" in kspec:
            vals = tuple(knob.coerce(v) for v in kspec["values"])
            knob = replace(knob, values=tuple(sorted(set(vals))) if knob.ordered else vals)
        if "min" in kspec or "max" in kspec:
            lo = knob.coerce(kspec.get("min", min(knob.values)))
            hi = knob.coerce(kspec.get("max", max(knob.values)))
            knob = replace(knob, values=tuple(v for v in knob.values if lo <= v <= hi))
        if "default" in kspec:
            knob = replace(knob, default=knob.coerce(kspec["default"]))
        if "key" in kspec:
            knob = replace(knob, key=str(kspec["key"]))
        if "strategies" in kspec:
            knob = replace(knob, strategies=frozenset(kspec["strategies"]))
        if not knob.values:
            raise SpaceError(f"--space: knob {name} has no values left")
        space.knobs[name] = knob


def record_matches(record: dict, glob: str) -> bool:
    """Whether a statistics record is for a file the trial hints apply to."""
    if not glob:
        return True
    path = str(record.get("file", ""))
    return fnmatch.fnmatch(path, glob) or fnmatch.fnmatch(path.rsplit("/", 1)[-1], glob)
