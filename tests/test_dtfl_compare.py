"""DTFL against its baselines (fedlib.lab.dtfl.compare): client sampling in the system simulation, the shared system of
a setting, DTFL's saving by hand, run parsing, the process pool, and clear errors; the paper's Tables 3 and 4 as
``dtfl_5_baselines`` and ``dtfl_6_scaling`` write them in their cells, and Table 3's figure legend."""
import ast
import json
import time

import matplotlib.pyplot as plt
import numpy as np
import pytest

from fedlib.lab.parallel import map_jobs
from fedlib.dtfl import TimeModel, sample_participants, simulate, tier_costs
from fedlib.lab.dtfl import compare as dc
from fedlib.lab.dtfl import experiments as dx
from fedlib.lab.notebooks import NOTEBOOK_DIR
from fedlib.lab.tables import metrics_dir
from fedlib.dtfl.timing import PROFILES
from fedlib.split import resnet20

from dtfl_jobs import baseline_entry


def test_sample_participants_counts_and_stream():
    rng = np.random.default_rng(0)
    p = sample_participants(20, 6, 0.1, rng)
    assert p.shape == (6, 20) and p.dtype == bool and (p.sum(1) == 2).all()
    assert (sample_participants(20, 6, 0.1, np.random.default_rng(0)) == p).all()
    assert (sample_participants(3, 2, 0.01, rng).sum(1) == 1).all()              # at least one client
    for kwargs, word in ((dict(fraction=0.0), "fraction"), (dict(fraction=1.5), "fraction"),
                         (dict(num_clients=0), "num_clients")):
        args = {**dict(num_clients=5, rounds=2, fraction=0.5, rng=rng), **kwargs}
        with pytest.raises(ValueError, match=word):
            sample_participants(**args)


def _tm():
    return TimeModel(tier_costs(resnet20(1, 28, 10, width=0.25), (1, 28, 28), 7, 10), 5e9, 8e9)


def test_simulate_with_participants_times_only_the_sample():
    tm, k, rounds = _tm(), 5, 4
    idx = np.tile(np.arange(k) % len(PROFILES), (rounds, 1))
    part = np.zeros((rounds, k), bool)
    part[:, 0] = True
    part[1:, 4] = True                                    # the slowest profile (0.1 CPU / 10 Mbps) joins at round 2
    sim = simulate(tm, PROFILES, idx, np.full(k, 50), np.random.default_rng(1), noise=0.0, participants=part)
    t = np.asarray(sim["T"])
    assert sim["straggler"] == [0, 4, 4, 4]
    np.testing.assert_allclose(sim["round_s"], [t[0, 0], t[1, 4], t[2, 4], t[3, 4]])
    tiers = np.asarray(sim["tiers"])
    assert (tiers[:, 1:4] == 7).all()                     # never sampled: never rescheduled from the initial tier
    full = simulate(tm, PROFILES, idx, np.full(k, 50), np.random.default_rng(1), noise=0.0)
    assert full["round_s"][0] >= sim["round_s"][0]
    with pytest.raises(ValueError, match="participants"):
        simulate(tm, PROFILES, idx, np.full(k, 50), np.random.default_rng(1), participants=np.zeros((rounds, k), bool))


class _FixedRecord:
    """A result store whose every run is one fixed training record (the system, not the training, is tested)."""

    def get_or_run(self, config, run):
        return {"round": [0, 3, 6], "test_acc": [0.1, 0.6, 0.9], "elapsed_s": [0.0, 1.0, 2.0]}


def test_every_method_of_a_setting_sees_one_system(fmnist, monkeypatch):
    """DTFL (run_entry) and the four baselines (baseline_entry) of one setting are simulated on the same system:
    per client and round the same CPUs and link speed, the same N_k and sampled clients, and the same time-noise
    draws, each equal to the value the setting defines (profiles of the ``system`` stream, etc.)."""
    from fedlib.core.seeding import numpy_rng
    from fedlib.dtfl import baseline_time, scheduler
    from fedlib.dtfl import profile_schedule
    from fedlib.dtfl.baseline_time import method_times
    seen = []
    check = scheduler.check_system

    def spy(profiles, profile_idx, samples, rng, noise, participants):
        out = check(profiles, profile_idx, samples, rng, noise, participants)
        seen.append(dict(out, rng_state=rng.bit_generator.state))     # before the simulation's noise draws
        return out
    monkeypatch.setattr(scheduler, "check_system", spy)
    monkeypatch.setattr(baseline_time, "check_system", spy)
    s = dx.Setup(num_clients=10, train_subset=500, rounds=6)
    kw = dict(case="all", setting="noniid", seed=3, target_acc=0.5, change_every=2, change_frac=0.3, fraction=0.2)
    runs = {"dtfl": dx.run_entry(_FixedRecord(), s, fmnist, num_tiers=7, **kw)}
    for method in dc.METHODS[1:]:
        runs[method] = baseline_entry(_FixedRecord(), s, fmnist, method, **kw)
    assert len(seen) == len(dc.METHODS) == 5

    # the system the setting defines: 5 profiles, 2 clients each at the start (shuffled), 3 of 10 clients move
    # before rounds 3 and 5 (change_every = 2); 2 of 10 clients sampled per round; then the noise draws
    rng = numpy_rng(3, "system")
    idx = profile_schedule(10, 6, 5, 2, 0.3, rng)
    assert np.bincount(idx[0], minlength=5).tolist() == [2] * 5
    assert [int((idx[r] != idx[r - 1]).sum()) for r in range(1, 6)] == [0, 3, 0, 3, 0]
    cpus = np.array([[PROFILES[i].cpus for i in row] for row in idx])
    mbps = np.array([[PROFILES[i].mbps for i in row] for row in idx])
    part = sample_participants(10, 6, 0.2, numpy_rng(3, "system/participants"))
    state = rng.bit_generator.state
    eps = rng.standard_normal((6, 10))
    for method, got in zip(dc.METHODS, seen):
        np.testing.assert_array_equal(got["cpus"], cpus, err_msg=method)
        np.testing.assert_array_equal(got["mbps"], mbps, err_msg=method)
        np.testing.assert_array_equal(got["participants"], part, err_msg=method)
        np.testing.assert_array_equal(got["samples"], seen[0]["samples"], err_msg=method)
        assert got["rng_state"] == state and got["noise"] == s.noise == 0.05, method
    assert seen[0]["samples"].sum() == 500 and (seen[0]["samples"] > 0).all()
    # and the simulations used them: every method's client time = its noise-free time at those CPUs and link
    # speeds x exp(0.05 eps) with the same eps
    n = np.broadcast_to(seen[0]["samples"], (6, 10))
    sim = runs["dtfl"]["sim"]
    clean = dx.setup_time_model(s, 7).times(np.asarray(sim["tiers"]), cpus, mbps, n)
    np.testing.assert_allclose(np.asarray(sim["T_c"]) / clean["T_c"], np.exp(0.05 * eps), rtol=1e-12)
    np.testing.assert_allclose(sim["T_com"], clean["T_com"], rtol=1e-12)
    for method in dc.METHODS[1:]:
        sim = runs[method]["sim"]
        clean = method_times(dc.costs_of(method, s.model, s.width, s.dataset), cpus, mbps, n,
                             s.core_gflops * 1e9, s.server_gflops * 1e9)
        np.testing.assert_allclose(np.asarray(sim["T_c"]) / clean["T_c"], np.exp(0.05 * eps), rtol=1e-12,
                                   err_msg=method)
        np.testing.assert_allclose(sim["T_com"], clean["T_com"], rtol=1e-12, err_msg=method)
    # the sampled clients decide each round's straggler, for every method
    for method, run in runs.items():
        assert all(part[r, k] for r, k in enumerate(run["sim"]["straggler"])), method
    whole = dx.system_inputs(s, fmnist, "all", "noniid", 3, change_every=2, change_frac=0.3)
    assert whole["participants"] is None and (whole["profile_idx"] == idx).all()


def test_reductions_by_hand():
    base = dict(setting="iid", model="resnet20", num_clients=10, seed=0)
    rows = [dict(base, method="dtfl", time_to_target_s=20.0), dict(base, method="fedavg", time_to_target_s=100.0),
            dict(base, method="fedgkt", time_to_target_s=None)]
    red = {r["baseline"]: r for r in dc.reductions(rows)}
    assert red["fedavg"]["ratio"] == 5.0 and red["fedavg"]["reduction"] == pytest.approx(0.8)
    assert red["fedgkt"]["ratio"] is None and red["fedgkt"]["reduction"] is None


# --- the paper's Tables 3 and 4, written in the notebooks that compare with them ---------------------------------

def _cells(nb: str) -> list[str]:
    return ["".join(c["source"]) for c in json.loads((NOTEBOOK_DIR / "dtfl" / f"{nb}.ipynb").read_text())["cells"]
            if c["cell_type"] == "code"]


def _cell(nb: str, name: str) -> str:
    """The source of the one code cell of ``nb`` that assigns ``name`` at the start of a line."""
    cells = [c for c in _cells(nb) if c.startswith(f"{name} = ") or f"\n{name} = " in c]
    assert len(cells) == 1, (nb, name, len(cells))
    return cells[0]


def _run(nb: str, name: str, **inputs) -> dict:
    """The namespace after the cell of ``nb`` that assigns ``name``, run on the notebook's parameter defaults, the
    imports of its setup cell and ``inputs``; ``savefig`` collects ``{name: figure}`` in ``saved``, writing nothing."""
    cells = _cells(nb)
    ns: dict = {}
    exec(cells[0], ns)                                       # the parameters cell: every default
    setup = next(c for c in cells if "setup_notebook(" in c)
    imports = [n for n in ast.parse(setup).body if isinstance(n, (ast.Import, ast.ImportFrom))]
    exec(compile(ast.Module(body=imports, type_ignores=[]), "setup-imports", "exec"), ns)
    ns["saved"] = {}
    ns["savefig"] = lambda fig, figure: ns["saved"].__setitem__(figure, fig)
    ns.update(inputs)
    exec(_cell(nb, name), ns)
    return ns


def test_table3_savings_are_the_claim_s_and_the_paper_s_80_percent():
    saving = _run("dtfl_5_baselines", "paper_table3")["paper_saving"]
    assert saving["resnet110"]["fedavg"][0] == pytest.approx(1 - 4816 / 24471)   # the paper's "80 %" (IID CIFAR-10)
    # the Claim's ResNet-56 row, IID / non-IID in percent, read from the paper by hand
    claim = {"fedavg": [79, 81], "splitfed": [92, 91], "fedyogi": [70, 70], "fedgkt": [89, 87]}
    assert {m: [round(100 * v) for v in s] for m, s in saving["resnet56"].items()} == claim
    assert list(saving["resnet110"]) == list(dc.METHODS[1:])                      # every baseline, in the metrics' order
    assert saving["resnet110"]["fedgkt"] == pytest.approx([1 - 4816 / 39676, 1 - 7054 / 47458])


def test_table4_is_the_claim_s_table():
    ns = _run("dtfl_6_scaling", "paper_table4")
    # the Claim's table (K = 20, 50, 100; the paper's K = 200 column is not in it), as typed from the paper
    claim = {20: [1877, 7950, 21350, 6341, 14595], 50: [2547, 10435, 29026, 8073, 17872],
             100: [3102, 14032, 36449, 10760, 24438]}
    assert ns["paper_clients"] == [20, 50, 100, 200] and list(ns["paper_table4"]) == list(dc.METHODS)
    for i, k in enumerate(ns["paper_clients"][:3]):
        assert [ns["paper_table4"][m][i] for m in dc.METHODS] == claim[k], k
    assert ns["paper_table4"]["dtfl"][3] == 3594 and ns["paper_table4"]["fedavg"][3] == 16060


def test_table3_figure_legend_names_each_mark_once():
    metrics = json.loads((metrics_dir("converged") / "dtfl_5_baselines.json").read_text())
    paper = _run("dtfl_5_baselines", "paper_table3")
    ns = _run("dtfl_5_baselines", "SAVING_FLOOR", rows=metrics["runs"], saving=metrics["reductions"], own=[],
              note="", paper_saving=paper["paper_saving"])
    fig = ns["saved"]["dtfl_table3_time_to_target"]
    texts = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert texts[-2:] == ["not reached within the run", "reached before training"]
    assert not any("×" in t or "0:" in t for t in texts), texts    # the marker shows the mark; the label words it
    markers = [h.get_marker() for h in fig.axes[0].get_legend().legend_handles[-2:]]
    assert markers == [r"$\times$", "$0$"]
    plt.close(fig)


def test_parse_runs_and_rounds_for():
    assert dc.parse_runs(["resnet20/iid", "resnet56/noniid"]) == [("resnet20", "iid"), ("resnet56", "noniid")]
    for bad in (["resnet20"], ["vgg16/iid"], ["resnet20/shards"], [3]):
        with pytest.raises(ValueError, match="runs"):
            dc.parse_runs(bad)
    assert [dc.rounds_for(80, k, 0.1) for k in (20, 50, 100)] == [40, 16, 8]
    assert dc.rounds_for(5, 4, 0.5) == 3
    with pytest.raises(ValueError, match="client_rounds"):
        dc.rounds_for(0, 10, 0.1)


def test_map_jobs_in_process_and_in_a_pool():
    jobs = [dict(num_clients=6, rounds=3, fraction=0.5, rng=np.random.default_rng(i)) for i in range(3)]
    here = map_jobs(sample_participants, jobs, workers=1)
    pooled = map_jobs(sample_participants, [dict(j, rng=np.random.default_rng(i)) for i, j in enumerate(jobs)],
                      workers=2)
    assert all((a == b).all() for a, b in zip(here, pooled))
    with pytest.raises(ValueError, match="workers"):
        map_jobs(sample_participants, jobs, workers=0)


def _log_start(path, tag, cost):
    with open(path, "a") as fh:
        fh.write(f"{tag}\n")
    # barrier: hold the worker until both workers have started a job (a worker that spawns late under load could
    # otherwise let the other finish its first job and take the third before it logs the second)
    deadline = time.monotonic() + 30
    while len(open(path).read().split()) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    return tag


def test_map_jobs_starts_the_costliest_jobs_first_and_keeps_the_order(tmp_path):
    path = str(tmp_path / "starts.txt")
    costs = [1, 3, 2, 5]
    out = map_jobs(_log_start, [dict(path=path, tag=i, cost=c) for i, c in enumerate(costs)], workers=2,
                   cost=lambda job: job["cost"])
    assert out == [0, 1, 2, 3]                                 # results in jobs order
    starts = [int(t) for t in open(path).read().split()]
    assert set(starts[:2]) == {3, 1} and set(starts[2:]) == {2, 0}   # costs 5 and 3 first


def test_eval_interval():
    assert [dc.eval_interval(r, 12) for r in (40, 16, 8, 12, 300)] == [3, 1, 1, 1, 25]
    with pytest.raises(ValueError, match="evals"):
        dc.eval_interval(40, 0)


def _tiny(fmnist):
    from fedlib.data import TensorDataset
    return TensorDataset("fashion-mnist", fmnist.x_train[:60], fmnist.y_train[:60], fmnist.x_test[:30],
                         fmnist.y_test[:30], fmnist.classes, fmnist.source)


def test_privacy_hooks_reach_the_client_loss_and_the_server(fmnist):
    """client_loss replaces the auxiliary head's CE (a zero loss leaves the client-side parameters at their
    initial values); smashed_transform sees every client's z at the cut and the evaluated model applies it."""
    import torch
    from fedlib.dtfl import DtflConfig, run_dtfl
    from fedlib.split import build_model
    from fedlib.split.config import SplitConfig
    ds = _tiny(fmnist)
    cfg = DtflConfig(model="resnet20", width=0.25, num_clients=3, batch_size=10, channels_last=False)
    cuts = [[2, 2, 2]]
    rec = run_dtfl(cfg, ds, cuts, keep_model=True, client_loss=lambda out, y, x, z: 0.0 * out.sum())
    init = build_model(SplitConfig(model="resnet20", width=0.25, num_devices=3, batch_sizes=(10,) * 3, cuts=(2,) * 3,
                                   seed=cfg.seed), 1, 28, 10)
    for (name, p), (_, q) in zip(rec["model"][:2].named_parameters(), init[:2].named_parameters()):
        torch.testing.assert_close(p, q, msg=name)                          # client side untouched
    assert any(not torch.equal(p, q) for p, q in zip(rec["model"][2:].parameters(), init[2:].parameters()))
    seen = []

    def zero(z):
        seen.append(tuple(z.shape[1:]))
        return torch.zeros_like(z)
    rec = run_dtfl(cfg, ds, cuts, smashed_transform=zero)
    assert set(seen) == {(16, 28, 28)} and len(seen) >= 3 * 2 + 2          # 3 clients x 2 steps + 2 evaluations
    with pytest.raises(ValueError, match="smashed_transform"):
        run_dtfl(cfg, ds, [[1, 2, 2]], smashed_transform=zero)


@pytest.mark.parametrize("backend", ["loop", "stacked"])
def test_engine_takes_a_local_loss_step_with_local_loss_only(fmnist, backend):
    """The engine refuses DTFL's local-loss step (with or without its privacy hooks) in a run without local loss,
    and a local-loss run without a step, on both backends; with both it trains."""
    import torch
    from fedlib.dtfl.local_loss import local_loss_step
    from fedlib.dtfl.tiers import aux_head_factory
    from fedlib.split import SplitConfig, build_model
    from fedlib.split.backends import split_backend
    f = split_backend(backend)
    cfg = SplitConfig(model="resnet20", width=0.25, num_devices=1, batch_sizes=(4,), cuts=(2,), mode="copies",
                      optimizer="adam", lr=1e-3)
    st = f.init_state(cfg, build_model(cfg, 1, 28, 10), (1, 28, 28))
    x, y = fmnist.x_train[:4], fmnist.y_train[:4]
    for step in (local_loss_step(backend, smashed_transform=lambda z: z),
                 local_loss_step(backend, client_loss=lambda out, y_, x_, z: out.sum())):
        with pytest.raises(ValueError, match="local_step needs local_loss=True"):
            f.train_round(st, [x], [y], local_step=step)
    assert torch.isfinite(torch.tensor(f.train_round(st, [x], [y])))
    local = SplitConfig(model="resnet20", width=0.25, num_devices=1, batch_sizes=(4,), cuts=(2,), mode="copies",
                        optimizer="adam", lr=1e-3, local_loss=True)
    st = f.init_state(local, build_model(local, 1, 28, 10), (1, 28, 28), aux_head=aux_head_factory(10))
    with pytest.raises(ValueError, match="local_loss=True needs a local_step"):
        f.train_round(st, [x], [y])
    assert st.round == 0
    assert torch.isfinite(torch.tensor(f.train_round(st, [x], [y], local_step=local_loss_step(backend))))


def test_hooks_of_an_end_to_end_method_are_refused(fmnist):
    """The privacy hooks act at the cut of DTFL's local loss: FedAvg / SplitFed (gradient through the cut) refuse
    them, naming the method."""
    from fedlib.dtfl import DtflConfig
    from fedlib.dtfl.run import run_engine
    cfg = DtflConfig(model="resnet20", width=0.25, num_clients=3, batch_size=10, channels_last=False)
    with pytest.raises(ValueError, match="method 'splitfed' trains end to end"):
        run_engine(cfg, _tiny(fmnist), [[2, 2, 2]], "splitfed", smashed_transform=lambda z: z)


def test_authors_scheduler_run_sees_our_system_and_never_tier_1(fmnist):
    """DTFL "as the authors' code schedules it" (compare_job method ``dtfl_authors``): the same system and time
    noise as ours, every client at tier 2 (md1..md2) in round 1, tier 1 never; ours starts at tier 7. A record with
    test accuracy 0.1 / 0.6 / 0.9 at rounds 0 / 3 / 6: the last fifth (round > 4.8) holds one evaluation, so the
    plateau is the last two, (0.6 + 0.9) / 2 = 0.75, spread 0.3."""
    s = dx.Setup(num_clients=10, train_subset=500, rounds=6)
    kw = dict(case="all", setting="iid", seed=2, target_acc=0.5, change_every=2, change_frac=0.3)
    ours, authors = (dx.run_entry(_FixedRecord(), s, fmnist, num_tiers=7, scheduler=m, **kw) for m in ("ours", "authors"))
    assert ours["row"]["method"] == "dtfl" and authors["row"]["method"] == "dtfl_authors"
    ta, to = np.asarray(authors["sim"]["tiers"]), np.asarray(ours["sim"]["tiers"])
    assert ta[0].tolist() == [2] * 10 and to[0].tolist() == [7] * 10
    assert ta.min() >= 2 and (ta != to).any()
    assert authors["sim"]["cuts"][0] == [2] * 10                               # md1..md2 on every client
    assert authors["sim"]["profile_idx"] == ours["sim"]["profile_idx"]
    for e in (ours, authors):
        assert e["row"]["plateau_acc"] == pytest.approx(0.75) and e["row"]["plateau_spread"] == pytest.approx(0.3)
    with pytest.raises(ValueError, match="scheduler"):
        dx.run_entry(_FixedRecord(), s, fmnist, num_tiers=7, scheduler="theirs", **kw)
    with pytest.raises(ValueError, match="M = 7"):
        dx.run_entry(_FixedRecord(), s, fmnist, num_tiers=6, scheduler="authors", **kw)


def _row(method, k, t, best=0.6, acc=0.5):
    return {"method": method, "num_clients": k, "time_to_target_s": t, "best_test_acc": best, "final_test_acc": acc,
            "case": "case2", "tier": None, "M": k, "rounds_to_target": None if t is None else 10}


def test_fig3_cell_names_coinciding_runs():
    """dtfl_3_fig3's figure cell (run as the notebook runs it, on made-up rows): M values whose runs coincide at
    every seed (same time and final accuracy) are named on the time panel, and only those."""
    import json
    from collections import defaultdict
    from pathlib import Path

    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    from fedlib.lab.plotting import colour
    nb = json.loads((Path(__file__).parents[1] / "notebooks" / "dtfl" / "dtfl_3_fig3.ipynb").read_text())
    cell = next("".join(c["source"]) for c in nb["cells"]
                if c["cell_type"] == "code" and 'savefig(fig, "dtfl_fig3_time_vs_tiers")' in "".join(c["source"]))
    rows = [_row("dtfl", m, t) for m, t in ((1, 144.0), (2, 175.0), (3, 175.0), (4, 175.0), (7, 162.0))]
    figs = []
    for final in ({}, {2: 0.51, 3: 0.52}):            # then the same time but other runs: not named
        ns = dict(rows=[dict(r, final_test_acc=final.get(i, r["final_test_acc"])) for i, r in enumerate(rows)],
                  cases=["case2"], plt=plt, np=np, defaultdict=defaultdict, colour=colour, caption=_no_op,
                  savefig=_no_op, note="", target_acc=0.5, change_every=2, dataset="fashion-mnist", profile="smoke")
        exec(cell, ns)
        figs.append(ns["fig"])
    assert [t.get_text() for t in figs[0].axes[0].texts] == ["case2: M = 2, 3, 4 identical runs"]
    assert [t.get_text() for t in figs[1].axes[0].texts] == []
    for fig in figs:
        plt.close(fig)


def _no_op(*args, **kwargs):
    return None
