"""How many aggregators Open MPI's OMPIO gives a collective write when no
cb_nodes hint names them: the MPI-IO of the machines `tessera model
validate here` measured (Open MPI 4.1, io_ompio_grouping_option 5 "simple",
io_ompio_max_aggregators_ratio 8, io_ompio_bytes_per_agg 32 MiB; see
`ompi_info --param io ompio --level 9`).

This is OMPIO's own choice, reproduced from its source
(ompi/mca/common/ompio/common_ompio_aggregators.c: simple_grouping and
cost_calc), not fitted: starting from one aggregator it tries 1 + k*incr,
keeping a larger count only while its LogGP cost estimate improves by at
least 1 ms and by a share that keeps growing (3 %); then it caps the count at
P / 8. The estimate is driven by d_p, the average contiguous chunk of the
ranks' file views: for a tile decomposition that is one row of a tile
(hundreds of bytes), the estimate is microseconds, no step gains 1 ms, and
OMPIO keeps ONE aggregator for every rank count. That one rank then receives,
lists, sorts and writes every piece of the frame (moves.two_phase).
"""
from __future__ import annotations

import math

#: OMPIO's defaults (Open MPI 4.1).
BYTES_PER_AGG = 32 << 20
MAX_AGGREGATORS_RATIO = 8
CUTOFF_THRESHOLD = 0.03      # io_ompio_aggregators_cutoff_threshold 3 (percent)
TIME_THRESHOLD = 0.001       # absolute improvement, seconds (not an MCA parameter)


def cost_calc(p: int, p_a: int, d_p: float, b_c: int, dim: int) -> float:
    """OMPIO's estimate of a collective write's communication time with p_a
    aggregators (the paper's LogGP formula with OMPIO's built-in constants)."""
    L, o, g, G = 1.84e-6, 1.49e-6, 1.19e-5, 6.7e-10
    n_as = n_ar = m_s = 1.0
    file_domain = int(p * d_p) // p_a
    n_r = file_domain / b_c
    if dim == 1:
        if d_p > b_c:
            n_ar, n_as, m_s = 1.0, 1.0, float(b_c)
        else:
            n_ar, n_as, m_s = b_c / d_p, 1.0, float(d_p)
    else:
        px = py = int(math.sqrt(p))
        n_as = p_a / px
        n_ar = float(py)
        if d_p > p_a * b_c / p:
            m_s = min(b_c / py, d_p)
        else:
            m_s = min(d_p * px / p_a, d_p)
    n_s = d_p / (n_as * m_s)
    if m_s < BYTES_PER_AGG:
        g = 1.08e-6
    t_send = n_s * (L + 2 * o + (n_as - 1) * g + (m_s - 1) * n_as * G)
    t_recv = n_r * (L + 2 * o + (n_ar - 1) * g + (m_s - 1) * n_ar * G)
    return t_send + t_recv


def aggregators(p: int, chunk_bytes: float, one_chunk: bool) -> int:
    """OMPIO's simple grouping for p processes whose file views have an
    average contiguous chunk of chunk_bytes (one_chunk: each view is a
    single chunk, OMPIO's 1-D case)."""
    if p <= 1 or chunk_bytes <= 0:
        return 1
    dim = 1 if one_chunk else 2
    incr = 2 if p < 16 else 4 if p < 128 else 16 if p < 4096 else 32
    prev_t = cost_calc(p, 1, chunk_bytes, BYTES_PER_AGG, dim)
    prev_a, prev_d = 1, 0.0
    for p_a in range(incr, p + 1, incr):
        t = cost_calc(p, p_a, chunk_bytes, BYTES_PER_AGG, dim)
        d_abs = prev_t - t
        d = d_abs / prev_t if prev_t else 0.0
        d_diff = d if p_a == incr else prev_d - d
        if d_diff < CUTOFF_THRESHOLD or d_abs < TIME_THRESHOLD:
            break
        prev_t, prev_d, prev_a = t, d, p_a
    return max(1, min(prev_a, p // MAX_AGGREGATORS_RATIO))
