"""`tessera advise` as a WRF user reads it (issue 27): the WRF setting of
every recommendation (io_form_history, &namelist_quilt, the model grid the
servers leave), the range where the optimum is flat, whose memory, what the
prediction leaves out (input and setup, an unbounded file system), striping
where the file system has it; and the refusals of `advise` and `model` for
strategies and profiles they do not know. Profiles are written here, so the
answers do not move when the shipped ones are refitted."""
import json

import pytest

from tessera import advise as A
from tessera.model import command as M
from tessera.model.case import bench_case
from tessera.model.predict import predict
from tessera.model.profile import PROFILE_DIR, Profile, load
from tessera.model.strategy import Strategy

CLUSTER = {"name": "cluster", "cores": 0, "cb_nodes": 4,
           "values": {"copy_bw": 5e9, "net_bw": 1e10, "msg_s": 1e-6, "match_s": 1.4e-7,
                      "coll_s": 2e-6, "write_bw": 5e8, "fs_bw": 0, "req_s": 0.001,
                      "file_s": 0.05, "open_s": 1e-4}}
LUSTRE = {"name": "lustre", "stripe_count": 8, "cores": 0, "cb_nodes": 8,
          "values": dict(CLUSTER["values"], write_bw=2e8, fs_bw=2e9)}

CLUSTER_ANSWER = """\
case: 400 x 300 x 20, 7 outputs of 99.9 MB, 64 processes; profile cluster
predicted, best first
hints                                                      WRF                    wall s  blocked s  hidden s  mem writer/server  mem other rank
strategy=servers:io_groups=1:io_tasks=2:buffer_bytes=32m   quilt 1x2, io_form 11   3.673     0.5763     1.286           36.8 MiB         1.5 MiB
strategy=servers:io_groups=1:io_tasks=2:buffer_bytes=128m  quilt 1x2, io_form 11   3.673     0.5763     1.286           52.4 MiB         1.5 MiB
strategy=servers:io_groups=1:io_tasks=2:buffer_bytes=512m  quilt 1x2, io_form 11   3.673     0.5763     1.286           52.4 MiB         1.5 MiB
strategy=split                                             io_form 102             3.681     0.6808         0            1.5 MiB         1.5 MiB
strategy=aggregate:aggregators=32                          io_form 12               3.71     0.7103         0            3.6 MiB       153.8 KiB

recommended: TESSERA_HINTS=strategy=servers:io_groups=1:io_tasks=2:buffer_bytes=32m
  predicted: wall 3.673 s, blocked 0.5763 s, hidden behind compute 1.286 s; io_groups x io_tasks
    1x1, 1x2, 1x4, 2x2, buffer_bytes 32m-512m within 3 % of its wall time
  also within 3 % of its wall time: split, aggregate:32
  memory: 36.8 MiB on each of the 2 server ranks, 1.5 MiB on each model rank (at most
    buffer_bytes=32m)
  WRF: quilting, &namelist_quilt nio_groups = 1, nio_tasks_per_group = 2, with io_form_history = 11
    (the whole group writes with PnetCDF; WRF built with -DPNETCDF_QUILT); 2 of the 64 processes
    become servers, so the model grid is the other 62: &domains nproc_x = 31, nproc_y = 2. WRF's
    quilt hand-off blocks while a group is busy, Tessera's does not (docs/servers.md): stock WRF may
    wait longer than predicted
alternative: TESSERA_HINTS=strategy=split
  predicted: wall 3.681 s, blocked 0.6808 s
  memory: 1.5 MiB on every rank (each writes its own file)
  WRF: io_form_history = 102 (one file per rank, joined afterwards)
notes:
  - wall time is the model's compute (--step-s) plus its blocked output; reading input and setup are
    left out, so a real run takes longer
  - profile cluster leaves the file system's bandwidth unbounded (fs_bw = 0 or absent): more writers
    never saturate it in the model, so the writer counts (aggregators, io_tasks) are not to be
    trusted; measure the file system you write to (tessera model calibrate --stats, docs/model.md)
"""

LUSTRE_ANSWER = """\
case: 600 x 400 x 30, 7 outputs of 286.2 MB, 128 processes; profile lustre
predicted, best first
hints                              WRF         wall s  blocked s  hidden s  mem writer/server  mem other rank
strategy=aggregate:aggregators=64  io_form 12   13.87      1.873         0            5.2 MiB       227.1 KiB
strategy=aggregate:aggregators=32  io_form 12   14.07      2.069         0           10.3 MiB       227.1 KiB
strategy=aggregate:aggregators=16  io_form 12   14.41      2.405         0           20.6 MiB       227.1 KiB
strategy=direct                    io_form 11   14.85      2.854         0           18.2 MiB         2.2 MiB

recommended: TESSERA_HINTS=strategy=aggregate:aggregators=64
  predicted: wall 13.87 s, blocked 1.873 s; aggregators 32-64 within 3 % of its wall time
  memory: 5.2 MiB on each of the 64 aggregators (the writers), 227.1 KiB on each other rank
  WRF: io_form_history = 12 (PIO) with 64 I/O tasks, one every 2 ranks (the Irma study's
    &pio_control: pioprocs = 64, piostride = 2)
alternative: TESSERA_HINTS=strategy=direct
  predicted: wall 14.85 s, blocked 2.854 s
  memory: 18.2 MiB on each MPI-IO aggregator of the collective write, 2.2 MiB on each other rank
  WRF: io_form_history = 11 (every rank writes collectively through PnetCDF)
notes:
  - wall time is the model's compute (--step-s) plus its blocked output; reading input and setup are
    left out, so a real run takes longer
  - striping: 64 ranks write one shared file and profile lustre's file system stripes over up to 8
    storage targets: add :striping_factor=8 to the hints (MPI-IO passes it to Lustre at create; or
    lfs setstripe -c 8 on the output folder; tessera tune searches striping_unit). The model has no
    striping term, so the times above do not count it: unstriped, the Irma study's PnetCDF runs took
    1.1x to 2.6x the wall time of its stripe-12 runs
"""


def write(tmp_path, d) -> str:
    path = tmp_path / f"{d['name']}.json"
    path.write_text(json.dumps(d))
    return str(path)


def answer(capsys, argv) -> str:
    assert A.main(argv) == 0
    return "\n".join(line.rstrip() for line in capsys.readouterr().out.splitlines()) + "\n"


def test_a_wrf_like_case_where_servers_win(tmp_path, capsys):
    """64 processes, a quilt-like answer: nio_groups, nio_tasks_per_group, the
    62 ranks left for nproc_x x nproc_y; the flat range of layouts and
    buffers; memory per server and per model rank; fs_bw = 0 said."""
    out = answer(capsys, ["--profile", write(tmp_path, CLUSTER), "--procs", "64", "--nx", "400",
                          "--ny", "300", "--nz", "20", "--steps", "60", "--output-every", "10",
                          "--step-s", "0.05", "--step-ranks", "64", "--top", "5"])
    assert out == CLUSTER_ANSWER


def test_a_striped_file_system_is_named(tmp_path, capsys):
    """A profile with stripe_count and a bounded fs_bw: striping named with
    the factor to ask for, no unbounded-file-system warning."""
    out = answer(capsys, ["--profile", write(tmp_path, LUSTRE), "--procs", "128", "--nx", "600",
                          "--ny", "400", "--nz", "30", "--steps", "60", "--output-every", "10",
                          "--step-s", "0.2", "--step-ranks", "128", "--top", "4",
                          "--strategies", "direct,aggregate,serial"])
    assert out == LUSTRE_ANSWER


#: apps/bench/namelist.c, bench_namelist_hints: io_form_history (and quilting)
#: -> hints. advise's WRF column must be its reverse.
NAMELIST = {"io_form 2": "serial", "io_form 11": "direct", "io_form 13": "direct:netcdf4",
            "io_form 12": "aggregate", "io_form 102": "split",
            "io_form 2 quilt": "servers:netcdf", "io_form 11 quilt": "servers:pnetcdf"}


@pytest.mark.parametrize("strategy,deflate,expected", [
    (Strategy("serial"), 0, "io_form 2"),
    (Strategy("direct"), 0, "io_form 11"),
    (Strategy("direct"), 1, "io_form 13"),
    (Strategy("aggregate", aggregators=4), 0, "io_form 12"),
    (Strategy("split"), 0, "io_form 102"),
    (Strategy("servers", io_groups=2, io_tasks=1), 0, "quilt 2x1, io_form 2"),
    (Strategy("servers", io_groups=2, io_tasks=4), 0, "quilt 2x4, io_form 11"),
])
def test_the_wrf_column_reverses_the_namelist_mapping(strategy, deflate, expected):
    case = bench_case(60, 50, 8, steps=4, output_every=2, deflate=deflate)
    short = A.wrf_short(strategy, case)
    assert short == expected
    form = short.split(", ")[-1] + (" quilt" if short.startswith("quilt") else "")
    back = NAMELIST[form]
    name, _, detail = back.partition(":")
    assert name == strategy.name
    if name == "servers":
        assert detail == strategy.server_backend()
    if detail == "netcdf4":
        assert deflate


def test_parallel_netcdf4_servers_have_no_stock_wrf_form():
    case = bench_case(60, 50, 8, steps=4, output_every=2, deflate=1)
    s = Strategy("servers", io_groups=2, io_tasks=4)
    assert A.wrf_short(s, case) == "quilt 2x4, Tessera only"
    assert "no stock WRF form" in A.wrf_setting(s, case, 16)
    assert A.wrf_short(Strategy("servers", io_groups=2), case) == "quilt 2x1, io_form 2"


def test_servers_leave_the_rest_of_the_processes_to_the_model_grid():
    case = bench_case(400, 300, 20, steps=60, output_every=10)
    text = A.wrf_setting(Strategy("servers", io_groups=2, io_tasks=4), case, 72)
    assert "&namelist_quilt nio_groups = 2, nio_tasks_per_group = 4" in text
    assert "8 of the 72 processes become servers, so the model grid is the other 64: " \
           "&domains nproc_x = 8, nproc_y = 8" in text
    assert "io_form_history = 11" in text and "-DPNETCDF_QUILT" in text
    one = A.wrf_setting(Strategy("servers", io_groups=3, io_tasks=1), case, 67)
    assert "io_form_history = 2 (the group's root writes serial NetCDF)" in one
    assert "the other 64" in one


def test_the_range_is_consecutive_tried_values_or_a_list():
    assert A.span([4, 8, 16], [1, 2, 4, 8, 16, 32]) == "4-16"
    assert A.span([2, 8], [1, 2, 4, 8]) == "2, 8"
    assert A.span([8], [1, 8]) == "8"
    assert A.span([32 << 20, 512 << 20], [32 << 20, 128 << 20, 512 << 20],
                  lambda b: f"{b >> 20}m") == "32m, 512m"


def test_the_flat_range_holds_every_count_within_the_share():
    """Aggregator counts whose predicted wall is within FLAT_PCT of the best
    aggregate, from the same predictions advise ranks."""
    prof = Profile("p", dict(CLUSTER["values"]))
    case = bench_case(400, 300, 20, steps=60, output_every=10, step_s=0.05, step_ranks=64)
    ranked = A.advise(case, prof, 64, names=("aggregate",))
    best = min(p.wall_s for _, p in ranked)
    near = sorted(s.aggregators for s, p in ranked if p.wall_s <= best * 1.03)
    text = A.flat_range(ranked, "aggregate")
    assert text == f"aggregators {near[0]}-{near[-1]} within 3 %" and len(near) > 1
    assert A.flat_range(ranked[:1], "aggregate") == ""
    assert A.flat_range(ranked, "split") == ""


def test_memory_names_whose_it_is():
    case = bench_case(400, 300, 20, steps=60, output_every=10)
    prof = Profile("p", dict(CLUSTER["values"]))
    said = {}
    for s in (Strategy("serial"), Strategy("direct"), Strategy("split"),
              Strategy("aggregate", aggregators=4), Strategy("servers", io_tasks=2)):
        said[s.name] = A.memory_text(s, predict(case, s, prof, 16), case, 16)
    assert "on the writer (rank 0)" in said["serial"]
    assert "on each MPI-IO aggregator" in said["direct"]
    assert "on every rank (each writes its own file)" in said["split"]
    assert "on each of the 4 aggregators (the writers)" in said["aggregate"]
    assert "on each of the 2 server ranks" in said["servers"] and "model rank" in said["servers"]


def test_notes_say_input_and_an_unbounded_file_system():
    case = bench_case(60, 50, 8, steps=4, output_every=2)
    best = (Strategy("aggregate", aggregators=2), None)
    open_fs = A.notes(Profile("p", dict(CLUSTER["values"])), case, best, 4)
    assert any("input and setup are left out" in n for n in open_fs)
    assert any("fs_bw = 0 or absent" in n and "not to be trusted" in n for n in open_fs)
    absent = {k: v for k, v in CLUSTER["values"].items() if k != "fs_bw"}
    assert any("fs_bw = 0 or absent" in n for n in A.notes(Profile("p", absent), case, best, 4))
    bounded = A.notes(Profile("p", dict(CLUSTER["values"], fs_bw=1e9)), case, best, 4)
    assert not any("fs_bw" in n for n in bounded) and not any("striping" in n for n in bounded)
    striped = Profile("p", dict(CLUSTER["values"], fs_bw=1e9), stripe_count=4)
    assert any(":striping_factor=2 " in n for n in A.notes(striped, case, best, 4))
    alone = A.notes(striped, case, (Strategy("split"), None), 4)
    assert any("one writer per file" in n for n in alone)


def test_the_irma_profile_carries_its_stripes():
    from tessera.model.validate import irma_profile

    assert irma_profile()[1].stripe_count == 12


# --- refusals and profile names -----------------------------------------------

@pytest.mark.parametrize("form", ["here", "here.json", "profiles/here", "profiles/here.json",
                                  f"{PROFILE_DIR}/here", f"{PROFILE_DIR}/here.json"])
def test_a_shipped_profile_by_any_of_its_names(form):
    assert load(form).values == load("here").values


@pytest.mark.parametrize("form", ["nope", "nope.json", "profiles/nope", "profiles/nope.json",
                                  "/elsewhere/profiles/here"])
def test_a_missing_profile_lists_the_shipped_ones(form):
    with pytest.raises(ValueError) as e:
        load(form)
    text = str(e.value)
    assert text.startswith(f"profile '{form}': no such file, and not a shipped profile (")
    assert "here, here16" in text and "json.json" not in text and "profiles/profiles" not in text


def test_a_folder_is_not_a_profile(tmp_path):
    with pytest.raises(ValueError, match="a folder, not a profile file"):
        load(str(tmp_path))


@pytest.mark.parametrize("strategies,said", [
    ("strategy=bogus", "unknown strategy 'bogus' in 'strategy=bogus' (strategy= takes serial, "
                       "direct, aggregate, split, servers)"),
    ("serial,strategy=quilt:io_tasks=2", "unknown strategy 'quilt'"),
    ("aggregate:x", "aggregators in 'aggregate:x': expected a whole number >= 1, got 'x'"),
    ("aggregate:0", "aggregators in 'aggregate:0': expected a whole number >= 1, got '0'"),
    ("servers:0x1", "'servers:0x1': expected servers:GxT"),
    ("servers:2y", "'servers:2y': expected servers:GxT"),
    ("strategy=servers:io_tasks=two", "io_tasks in 'strategy=servers:io_tasks=two': expected a "
                                      "whole number >= 1"),
    ("strategy=serial:slab_bytes=lots", "slab_bytes and buffer_bytes take sizes such as 64m"),
    ("servers:4x4", "nothing to predict: servers:4x4 needs more than 2 processes (--ranks 2)"),
    ("quilt", "unknown strategy 'quilt' (serial, direct, split, aggregate:N, servers:GxT"),
])
def test_model_predict_refuses_strategies_it_does_not_know(capsys, strategies, said):
    assert M.main(["predict", "--profile", "here", "--ranks", "2", "--nx", "40", "--ny", "30",
                   "--nz", "4", "--strategies", strategies]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tessera model: ") and said in err and "Traceback" not in err


def test_model_predict_names_its_own_flag(capsys):
    assert M.main(["predict", "--ranks", "0", "--strategies", "serial"]) == 2
    assert "tessera model: --ranks: expected process counts" in capsys.readouterr().err


def test_model_predict_leaves_out_what_does_not_fit_and_says_so(capsys):
    assert M.main(["predict", "--profile", "here", "--ranks", "2,8", "--nx", "40", "--ny", "30",
                   "--nz", "4", "--strategies", "servers:2x2"]) == 0
    cap = capsys.readouterr()
    assert "note: left out: servers:2x2 needs more than 2 processes" in cap.err
    assert "servers:2x2" in cap.out


def test_advise_refuses_before_it_predicts(capsys):
    assert A.main(["--procs", "4", "--strategies", "serial,quilt"]) == 2
    err = capsys.readouterr().err
    assert err == ("tessera advise: unknown strategy quilt in --strategies (serial, direct, "
                   "aggregate, split, servers)\n")


def test_advise_says_why_nothing_is_left(capsys):
    assert A.main(["--procs", "1", "--nx", "40", "--ny", "30", "--nz", "4",
                   "--strategies", "servers"]) == 1
    assert "no candidate of servers runs on 1 process (" in capsys.readouterr().err
    assert A.main(["--procs", "4", "--nx", "40", "--ny", "30", "--nz", "4",
                   "--mem-limit", "1k"]) == 1
    assert "no candidate fits --mem-limit 1k" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["--step-s", "-1"], ["--background", "-2"]])
def test_advise_refuses_negative_times_and_loads(capsys, argv):
    with pytest.raises(SystemExit) as e:
        A.main(["--procs", "4"] + argv)
    assert e.value.code == 2
    assert "expected a number >= 0" in capsys.readouterr().err
