"""Fitting a profile to measured times: the model is linear in its per-unit
costs (time = amounts . theta), so a fit is a non-negative least-squares
problem. Rows are weighted by 1/measured so every point counts by its
relative error, not its size. Parameters not fitted keep the base profile's
values (for published studies: the hardware's data sheet figures).
"""
from __future__ import annotations

import numpy as np

from .profile import KEYS, Profile, from_theta


def nnls(a: np.ndarray, b: np.ndarray, iters: int = 500) -> np.ndarray:
    """min ||a x - b|| subject to x >= 0 (Lawson-Hanson active set)."""
    m, n = a.shape
    x = np.zeros(n)
    passive = np.zeros(n, dtype=bool)
    w = a.T @ (b - a @ x)
    for _ in range(iters):
        if passive.all() or w[~passive].max(initial=-np.inf) <= 1e-12 * max(1.0, abs(w).max()):
            break
        j = np.argmax(np.where(passive, -np.inf, w))
        passive[j] = True
        while True:
            z = np.zeros(n)
            z[passive] = np.linalg.lstsq(a[:, passive], b, rcond=None)[0]
            if (z[passive] > 0).all():
                x = z
                break
            neg = passive & (z <= 0)
            alpha = np.min(x[neg] / (x[neg] - z[neg]))
            x = x + alpha * (z - x)
            passive &= x > 1e-15
        w = a.T @ (b - a @ x)
    return x


def fit(rows: list, measured: list, base: Profile, free: tuple, scale: list | None = None
        ) -> Profile:
    """Profile whose `free` parameters best explain `measured` seconds, given
    each point's amount vector (Amounts.vector()) and the oversubscription
    factor it runs under (`scale`, default 1)."""
    a = np.array(rows, dtype=float)
    y = np.array(measured, dtype=float)
    s = np.ones(len(y)) if scale is None else np.array(scale, dtype=float)
    a = a * s[:, None]
    theta = np.array(base.theta())
    # A parameter no row has an amount of cannot be fitted: it keeps its value.
    idx = [KEYS.index(k) for k in free if np.any(a[:, KEYS.index(k)] != 0)]
    fixed = [i for i in range(len(KEYS)) if i not in idx]
    rest = y - a[:, fixed] @ theta[fixed]
    wgt = 1.0 / np.maximum(y, 1e-9)
    cols = a[:, idx] * wgt[:, None]
    # Columns are in very different units (bytes vs messages): normalise.
    norm = np.maximum(np.abs(cols).max(axis=0), 1e-300)
    x = nnls(cols / norm, rest * wgt) / norm
    theta[idx] = x
    return from_theta(theta, base)
