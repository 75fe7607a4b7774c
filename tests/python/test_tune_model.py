"""tessera tune --model: the search measures what the model predicts best
first. The model is replaced by a known predictor over the fake run
(fixtures/tune/fake_run.py), so the order the trials ran in can be checked."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures" / "tune"))
from tune_helpers import fake_command, load, run_tune  # noqa: E402

import fake_run  # noqa: E402
import pytest  # noqa: E402

from tessera.tune import command as tune  # noqa: E402
from tessera.tune import model as tune_model  # noqa: E402

ARGS = ["--budget", "14", "--repeat", "1", "--out", "out"]


def with_predictor(monkeypatch, predictor):
    monkeypatch.setattr(tune, "make_order", lambda name, command, objective:
                        tune_model.ModelOrder(predictor=predictor))


def true_model(space, cfg):
    return fake_run.true_time(space.hints(cfg))


def strategy_pass(session):
    return [t for t in session["trials"] if t["phase"] == "strategies"]


def test_strategy_pass_follows_the_prediction(tmp_path, monkeypatch):
    # A model that is exactly wrong: it predicts the slowest strategy fastest.
    with_predictor(monkeypatch, lambda space, cfg: 100.0 - true_model(space, cfg))
    code, out, _ = run_tune(tmp_path, ARGS + ["--model", "fake"], fake_command())
    assert code == 0
    order = [t["strategy"] for t in strategy_pass(load(out))]
    # direct is the default's strategy (measured already); the rest by prediction.
    assert order == ["serial", "split", "aggregate"]
    # Inside the search too: aggregate's first move is the one predicted best
    # (fewest aggregators: furthest from the true optimum of 4).
    search = [t for t in load(out)["trials"] if t["phase"] == "search aggregate"]
    assert search[0]["key"] == "strategy=aggregate:aggregators=1"


def test_right_model_starts_at_the_winner(tmp_path, monkeypatch):
    with_predictor(monkeypatch, true_model)
    code, out, _ = run_tune(tmp_path, ARGS + ["--model", "fake"], fake_command())
    assert code == 0
    with_model = load(out)
    first = strategy_pass(with_model)[0]
    # The predicted best start of aggregate: 4 aggregators, 64 MiB collective buffer.
    assert fake_run.true_time(first["key"]) == pytest.approx(3.0)
    assert first["key"] == "strategy=aggregate:aggregators=4:cb_buffer_size=67108864"
    code, _, _ = run_tune(tmp_path, ["--budget", "14", "--repeat", "1", "--out", "out2"],
                             fake_command())
    assert code == 0
    without = load(tmp_path / "out2")   # run_tune names "out"; this run wrote out2
    for s in (with_model, without):        # the same winner (other knobs: noise only)
        assert fake_run.true_time(s["result"]["candidate"]["hints"]) == pytest.approx(3.0)
    assert tune_model.trials_to_winner(with_model) == 2               # default, then it
    assert tune_model.trials_to_winner(without) > 2


def test_search_queue_sorted_by_prediction():
    from tessera.tune.space import RunShape, build_space

    space = build_space(RunShape(ranks=8, file_bytes=256 << 20, total_bytes=512 << 20))
    order = tune_model.ModelOrder(predictor=lambda sp, cfg: -cfg.get("aggregators", 2))
    cfgs = [space.make("aggregate", {"aggregators": n}) for n in (1, 2, 4, 8)]
    assert [c.get("aggregators") for c in order.order(space, cfgs)] == [8, 4, 2, 1]
    # Ties keep their order (the rules' order in the search queue).
    flat = tune_model.ModelOrder(predictor=lambda sp, cfg: 1.0)
    assert flat.order(space, cfgs) == cfgs


def test_bench_case_from_the_command():
    o = tune_model.bench_options(["mpiexec", "-n", "4", "tessera-bench", "--nx", "24",
                                  "--nz=4", "--steps", "2", "--json", "{json}"])
    assert (o["nx"], o["ny"], o["nz"], o["steps"], o["output_every"]) == (24, 128, 4, 2, 5)


def test_unknown_profile_is_a_clear_error(tmp_path, capsys):
    code, _, _ = run_tune(tmp_path, ARGS + ["--model", "no-such-profile"], fake_command())
    assert code == 2
    assert "--model no-such-profile: cannot load the profile" in capsys.readouterr().err
