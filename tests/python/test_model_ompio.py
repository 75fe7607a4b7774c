"""The direct strategy's collective write as the model counts it: OMPIO's
own aggregator choice (model_ompio, reproduced from Open MPI's simple
grouping), the writes PnetCDF's wait makes of a frame (write_groups), and
the contiguous file pieces of a tile decomposition (file_pieces)."""
from tessera.model.case import bench_case, tile_bytes_max
from tessera.model.ompio import aggregators, cost_calc
from tessera.model.profile import Profile
from tessera.model.strategy import Strategy, cb_nodes, file_pieces, write_groups

CASE = bench_case(200, 200, 30, 6, 2)


def test_tile_rows_get_one_aggregator_at_every_count():
    # 200-byte tile rows: OMPIO's estimate never gains its 1 ms threshold.
    for p in (2, 8, 12, 16, 64, 1024, 4096):
        assert aggregators(p, 200.0, one_chunk=False) == 1, p


def test_large_chunks_get_more_aggregators_capped_at_p_over_8():
    assert aggregators(16, 6e6, one_chunk=False) == 2      # cap 16 // 8
    assert aggregators(64, 1e6, one_chunk=False) == 8      # cap 64 // 8
    assert aggregators(1024, 1e5, one_chunk=False) == 16   # the estimate stops first
    assert aggregators(1, 6e6, one_chunk=True) == 1


def test_cost_calc_is_omp_io_formula():
    # P=16, one aggregator, 200-byte chunks, 2-D: n_s = 4 sends of 200 bytes,
    # n_r = 3200 / 32 MiB receive rounds (common_ompio_aggregators.c).
    send = 4 * (1.84e-6 + 2 * 1.49e-6 + (0.25 - 1) * 1.08e-6 + 199 * 0.25 * 6.7e-10)
    recv = 3200 / (32 << 20) * (1.84e-6 + 2 * 1.49e-6 + 3 * 1.08e-6 + 199 * 4 * 6.7e-10)
    assert abs(cost_calc(16, 1, 200, 32 << 20, 2) - (send + recv)) < 1e-15


def test_cb_nodes_hint_and_profile_come_first():
    prof = Profile("p", {}, cb_nodes=0)
    assert cb_nodes(Strategy("direct"), prof, 16, 200.0) == 1
    assert cb_nodes(Strategy("direct", cb_nodes=4), prof, 16, 200.0) == 4
    assert cb_nodes(Strategy("direct"), Profile("p", {}, cb_nodes=12), 16, 200.0) == 12
    assert cb_nodes(Strategy("direct"), prof, 16) == 16     # no file view given: every writer


def test_one_write_per_wait():
    one = CASE.with_(vars=[])
    tile = lambda v: tile_bytes_max(one.with_(vars=[v]), 4, 2)
    dec = CASE.decomposed()
    assert write_groups(CASE, Strategy("direct"), tile) == [dec]            # 128 MiB buffer
    assert write_groups(CASE, Strategy("direct", buffer_bytes=1), tile) == [[v] for v in dec]
    half = sum(tile(v) for v in dec) // 2
    groups = write_groups(CASE, Strategy("direct", buffer_bytes=half), tile)
    assert [v for g in groups for v in g] == dec and len(groups) == 3
    assert all(sum(tile(v) for v in g) <= half for g in groups)


def test_file_pieces_of_a_tile_decomposition():
    u = next(v for v in CASE.vars if v.name == "U")          # (30, 200, 201)
    assert file_pieces(u, 4, 2) == 30 * 200 * 4              # a piece per tile row
    assert file_pieces(u, 1, 3) == 30 * 3                    # a piece per tile level
    assert file_pieces(u, 1, 1) == 1
    assert sum(file_pieces(v, 4, 2) for v in CASE.decomposed()) == 238528
