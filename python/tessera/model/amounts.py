"""Amounts of work, priced by a profile: the vector that the strategies'
equations (strategy.py), compression (deflate.py) and calibration share.

A module of its own, below all three, so that deflate.py can build amounts
without importing the strategies that import it.
"""
from __future__ import annotations

from .profile import KEYS, Profile


class Amounts(dict):
    """Amount per profile parameter (a sparse vector over KEYS)."""

    def add(self, key: str, n: float) -> "Amounts":
        if n:
            self[key] = self.get(key, 0.0) + float(n)
        return self

    def plus(self, other: "Amounts", times: float = 1.0) -> "Amounts":
        for k, v in other.items():
            self.add(k, v * times)
        return self

    def scaled(self, f: float) -> "Amounts":
        return Amounts({k: v * f for k, v in self.items()})

    def vector(self) -> list:
        return [self.get(k, 0.0) for k in KEYS]

    def seconds(self, profile: Profile) -> float:
        return sum(self.get(k, 0.0) * profile.unit_cost(k) for k in KEYS)

    def loaded(self, profile: Profile, processes: int, busy: int,
               background: float = 0.0, everyone: tuple = ()) -> "Amounts":
        """These amounts on a machine where `processes` of ours (`busy` of
        them working) and `background` other busy processes share
        profile.cores: CPU work stretches, and every message and collective
        stage may wait for a peer that is not running (slice_s). The
        amounts named in `everyone` are work every one of our processes
        does at the same time (direct's file views), stretched as such."""
        stretch, desched = profile.contention(processes, busy, background)
        wide = profile.contention(processes, processes, background)[0]
        out = Amounts({k: v * (wide if k in everyone else stretch) for k, v in self.items()})
        sync = self.get("msg_s", 0.0) + self.get("coll_s", 0.0)
        return out.add("slice_s", sync * desched)
