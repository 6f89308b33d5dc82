"""DTFL's claims read the committed converged metrics as intended (values hand-checked against the JSON)."""
import copy
import json

import pytest

from fedlib.lab.verdicts import Censored, MissingMetrics, find, judge
from fedlib.lab.dtfl import claims, setup_rows
from fedlib.lab.notebooks import NOTEBOOK_DIR
from fedlib.lab.tables import metrics_dir

FOLDER = metrics_dir(claims.PROFILE)


def _setup_cell(nb: str) -> str:
    """The source of the notebook's Setup cell: the one code cell that calls ``story.setup_section``."""
    cells = ["".join(c["source"]) for c in json.loads((NOTEBOOK_DIR / "dtfl" / f"{nb}.ipynb").read_text())["cells"]
             if c["cell_type"] == "code" and "story.setup_section(" in "".join(c["source"])]
    assert len(cells) == 1, nb
    return cells[0]


def _metrics(nb):
    return json.loads((FOLDER / f"{nb}.json").read_text())


def _cell(claim_id, variant="ResNet-20"):
    c = find(claims.CLAIMS, claim_id)
    return judge(c, _metrics(c.notebook))["cells"][variant]


def test_every_notebook_decides_a_claim():
    assert {c.notebook for c in claims.CLAIMS} == {f"dtfl_{i}_{n}" for i, n in enumerate(
        ["profiles", "table1", "fig3", "training", "baselines", "scaling", "privacy"], 1)}
    # the worked example (a scheduler of your own) has Setup rows but decides no claim of the paper
    for nb in {c.notebook for c in claims.CLAIMS} | {"dtfl_your_method"}:
        assert "story.setup_section(globals(), setup_table, setup_deviations)" in _setup_cell(nb), nb


def test_table3_saving_vs_fedavg():
    # dtfl_5_baselines.json, seed 0: DTFL 200.007 s, FedAvg 359.910 s (ResNet-20 IID); 404.538 / 1033.383 (ResNet-56)
    assert claims.PAPER_SAVING["fedavg"][0] == pytest.approx(1 - 2750 / 13157)
    assert _cell("table3_saving_fedavg_iid")["values"] == [pytest.approx(1 - 200.007 / 359.910, abs=1e-4)]
    cell = _cell("table3_saving_fedavg_iid", "ResNet-56")
    assert cell["values"] == [pytest.approx(1 - 404.538 / 1033.383, abs=1e-4)] and cell["word"] == "partly"


def test_table3_censored_fedgkt_noniid():
    # FedGKT never reaches 0.68 non-IID: its time exceeds its whole simulated time (1665.94 s for ResNet-20)
    c = find(claims.CLAIMS, "table3_saving_fedgkt_noniid")
    found = c.extract(_metrics(c.notebook))
    (v,) = found["ResNet-20"]
    assert isinstance(v, Censored) and v.side == "lower"
    assert v.value == pytest.approx(1 - 211.276 / 1665.943, abs=1e-4)
    assert _cell("table3_saving_fedgkt_noniid", "ResNet-56")["word"] == "not reached"   # ≥ 69 % < the paper's 87 %


def test_table1_fig3_table4_table5():
    # case 2: tier 6 142.530 s is fastest, tier 5 153.765 s: 0.927, more than 7 % slower
    cell = _cell("table1_best_tier_case2")
    assert cell["values"] == [pytest.approx(142.530 / 153.765, abs=1e-4)] and cell["word"] == "fails"
    assert _cell("table1_best_tier_case1")["word"] == "holds"
    seq = _cell("fig3_time_vs_m_case1")["values"][0]
    assert seq[0] == pytest.approx(308.698, abs=1e-3) and seq[-1] == pytest.approx(155.443, abs=1e-3)
    # Table 4, our scheduler: K = 50 DTFL never reaches 0.71 in its 292.138 s, FedAvg does at 335.450 s
    v = _cell("table4_fastest_every_k")["values"][0]
    assert v == {"censored": "upper", "value": pytest.approx(335.450 / 292.138, abs=1e-4)}
    assert _cell("table5_shuffle_cost")["values"] == [pytest.approx(100 * (0.775 - 0.622), abs=1e-6)]


def test_missing_key_names_the_claim():
    c = find(claims.CLAIMS, "table3_saving_fedavg_iid")
    with pytest.raises(MissingMetrics) as e:
        judge(c, {"notebook": "dtfl_5_baselines"})
    assert e.value.claim == "table3_saving_fedavg_iid" and "table3_saving_fedavg_iid" in str(e.value)
    m = copy.deepcopy(_metrics("dtfl_3_fig3"))
    for r in m["runs"]:
        del r["time_to_target_s"]
    with pytest.raises(MissingMetrics, match="fig3_time_vs_m_case1"):
        judge(find(claims.CLAIMS, "fig3_time_vs_m_case1"), m)


# ---- 2026-12-01: the claims as the paper words them (hand-made metrics, values worked by hand) ----------------------
def _run(method, acc, seed=0, model="resnet20", setting="iid", t=100.0, best=None, **more):
    return dict(method=method, model=model, setting=setting, seed=seed, final_test_acc=acc,
                best_test_acc=acc if best is None else best, time_to_target_s=t, sim_total_s=400.0, **more)


def _judge(claim_id, metrics):
    return judge(find(claims.CLAIMS, claim_id), metrics)["cells"]


def test_accuracy_margin_is_the_standard_error_of_the_converged_test_set():
    from fedlib.lab import notebooks
    profile = notebooks._read_yaml(notebooks.PROFILE_DIR / "converged" / "dtfl.yaml")
    assert claims.N_TEST == profile["test_subset"] == 2000
    assert claims.ACC_SE_POINTS == 0.89                       # 100 * sqrt(0.8 * 0.2 / 2000) = 0.894
    assert claims.ACC_SE == pytest.approx(0.008944, abs=1e-6)


def test_accuracy_against_each_baseline_reads_the_final_accuracy_of_that_baseline():
    # DTFL 0.800 (best 0.850); FedAvg 0.810, FedYogi 0.805, SplitFed 0.7911, FedGKT 0.700 (best 0.820)
    runs = [_run("dtfl", 0.800, best=0.850), _run("fedavg", 0.810), _run("fedyogi", 0.805),
            _run("splitfed", 0.7911), _run("fedgkt", 0.700, best=0.820)]
    m = {"runs": runs}
    by_hand = {"fedavg": (-1.00, "fails"), "fedyogi": (-0.50, "holds"), "splitfed": (0.89, "holds"),
               "fedgkt": (10.00, "holds")}
    for b, (value, word) in by_hand.items():
        cell = _judge(f"accuracy_vs_{b}_iid", m)["ResNet-20"]
        assert cell["values"] == [pytest.approx(value, abs=1e-9)] and cell["word"] == word, b
    # -1.00 is 0.11 beyond the -0.89 threshold: within the resolution (0.89), so that is the reason
    assert _judge("accuracy_vs_fedavg_iid", m)["ResNet-20"]["reason"]["class"] == "within resolution"
    # the threshold itself: at most one standard error below holds, more fails
    rule = find(claims.CLAIMS, "accuracy_vs_fedavg_iid").rule
    assert rule.word(-0.89) == "holds" and rule.word(-0.90) == "fails" and rule.word(30.0) == "holds"


def test_accuracy_seed_without_the_baseline_is_named_not_dropped():
    m = {"runs": [_run("dtfl", 0.80), _run("fedavg", 0.79), _run("dtfl", 0.80, seed=1)], "seeds": [0, 1]}
    cell = _judge("accuracy_vs_fedavg_iid", m)["ResNet-20"]
    assert cell["values"][0] == pytest.approx(1.0) and cell["values"][1] == {"unjudged": "no FedAvg run of resnet20 iid"}
    assert cell["word"] == "holds" and cell["undecided"] == [{"seed": "seed 1", "why": "no FedAvg run of resnet20 iid"}]


def _fig3(case="case1", seed=0, times=None, tiers=None):
    """Fig. 3's rows of one case and seed: ``times`` {M: time to target} of the scheduler, ``tiers`` {tier: time}
    of fixed-tier runs."""
    rows = [dict(method="dtfl", model="resnet20", case=case, seed=seed, M=M, tier=None, time_to_target_s=t,
                 sim_total_s=400.0) for M, t in (times or {}).items()]
    rows += [dict(method="dtfl", model="resnet20", case=case, seed=seed, M=7, tier=k, time_to_target_s=t,
                  sim_total_s=400.0) for k, t in (tiers or {}).items()]
    return rows


def test_dynamic_scheduler_against_static_tiers():
    m = {"runs": _fig3(times={1: 300.0, 2: 250.0, 7: 150.0})}
    # against M = 1 at the largest M (7): 300 / 150 = 2.0 (M = 2 would give 1.2)
    cell = _judge("dynamic_vs_single_tier_case1", m)["ResNet-20"]
    assert cell["values"] == [pytest.approx(2.0)] and cell["word"] == "holds"
    # no fixed-tier run: the best static tier is unjudged, with the reason
    cell = _judge("dynamic_vs_best_static_case1", m)["ResNet-20"]
    assert cell["word"] == "not reached" and cell["values"] == [{"unjudged": claims.NO_STATIC}]
    # fixed tiers beside it: the fastest (tier 3, 120 s) against the scheduler's 150 s: 0.8, fails
    m = {"runs": _fig3(times={1: 300.0, 7: 150.0}, tiers={1: 200.0, 3: 120.0, 6: 310.0})}
    cell = _judge("dynamic_vs_best_static_case1", m)["ResNet-20"]
    assert cell["values"] == [pytest.approx(0.8)] and cell["word"] == "fails"
    # the scheduler never reached the target in its 400 s: 300 / [400, inf) is at most 0.75, fails
    m = {"runs": _fig3(times={1: 300.0, 7: None})}
    cell = _judge("dynamic_vs_single_tier_case1", m)["ResNet-20"]
    assert cell["values"] == [{"censored": "upper", "value": pytest.approx(0.75)}] and cell["word"] == "fails"


def test_committed_fig3_judges_the_scheduler_against_the_static_tiers_beside_it():
    # fig3 seed 0: the fastest static tier of M = 7 is tier 1 in both cases, 60.249 s (case 1) and 116.488 s
    # (case 2), against the scheduler at M = 7, 155.443 s and 162.311 s
    cell = _cell("dynamic_vs_best_static_case1")
    assert cell["values"] == [pytest.approx(60.249 / 155.443, abs=1e-6)] and cell["word"] == "fails"
    assert _cell("dynamic_vs_best_static_case2")["values"] == [pytest.approx(116.488 / 162.311, abs=1e-6)]
    # fig3 seed 0: M = 1 142.764 s, M = 7 162.311 s (case 2); 308.698 / 155.443 (case 1)
    assert _cell("dynamic_vs_single_tier_case2")["values"] == [pytest.approx(142.764 / 162.311, abs=1e-6)]
    assert _cell("dynamic_vs_single_tier_case1")["values"] == [pytest.approx(308.698 / 155.443, abs=1e-6)]


def test_fig2_narrower_reading_leaves_out_fedgkt_only():
    # DTFL 200 s; FedAvg 400, SplitFed 500, FedYogi 800, FedGKT 100: every baseline 0.5x, without FedGKT 2.0x
    runs = [_run("dtfl", 0.8, t=200.0), _run("fedavg", 0.8, t=400.0), _run("splitfed", 0.8, t=500.0),
            _run("fedyogi", 0.8, t=800.0), _run("fedgkt", 0.8, t=100.0)]
    assert _judge("fig2_dtfl_first", {"runs": runs})["ResNet-20"]["values"] == [pytest.approx(0.5)]
    assert _judge("fig2_dtfl_first_global_models", {"runs": runs})["ResNet-20"]["values"] == [pytest.approx(2.0)]


def _committed(nb):
    from fedlib.lab.paths import REPO_ROOT
    paths = [FOLDER / f"{nb}.json", REPO_ROOT / "figures/converged/seed1/metrics" / f"{nb}.json",
             REPO_ROOT / claims.EXTRA_COLUMNS[0]["metrics"] / f"{nb}.json"]
    return [json.loads(p.read_text()) for p in paths if p.exists()]


def test_every_claim_that_compares_with_fedgkt_names_its_measure():
    # a claim compares with FedGKT when dropping FedGKT's runs from some committed metrics changes what it reads
    for c in claims.CLAIMS:
        moved = False
        for m in _committed(c.notebook):
            without = dict(m, runs=[r for r in m.get("runs", []) if r.get("method") != "fedgkt"])
            try:
                moved |= c.extract(m) != c.extract(without)
            except KeyError:
                moved = True
        fedgkt = c.deviation == claims.FEDGKT_DIFFERS
        assert moved == fedgkt, (c.id, moved, c.deviation)
    # the deviation named is where our FedGKT differs from FedML (the xfails), not FedML's own mean of composites
    assert "1 epoch" in claims.FEDGKT_DIFFERS and "stem" in claims.FEDGKT_DIFFERS and "1/n share" in claims.FEDGKT_DIFFERS
    for nb in ("dtfl_5_baselines", "dtfl_6_scaling"):     # the notebooks that show FedGKT state its evaluation
        assert "setup_rows.FEDGKT_EVAL" in _setup_cell(nb).split("setup_deviations = ")[1], nb
    assert "FedGKT has no global model" in setup_rows.FEDGKT_EVAL


def test_patch_shuffling_reason_names_resnet56_not_a_vit():
    text = _setup_cell("dtfl_7_privacy")                  # its Setup rows and deviations
    assert "ViT" not in text and "setup_rows.SHUFFLE_SETTINGS" in text and "ResNet-56" in claims.SHUFFLE_SETTINGS
    assert find(claims.CLAIMS, "table5_shuffle_cost").deviation == claims.SHUFFLE_SETTINGS


def test_dcor_trend_steps_count_beyond_the_standard_error():
    # seed 0's 0.775 -> 0.772 -> 0.758 -> 0.330: the first step (0.003) is within 0.0089, so only the ends: partly
    m = {"runs": [dict(model="resnet20", seed=0, patch_shuffling=False, alpha=a, final_test_acc=x)
                  for a, x in ((0.0, 0.775), (0.25, 0.772), (0.5, 0.758), (0.75, 0.330))]}
    cell = _judge("table5_dcor_accuracy", m)["ResNet-20"]
    assert cell["word"] == "partly" and cell["reason"]["class"] == "within resolution"
    m["runs"][1]["final_test_acc"] = 0.765          # 0.775 -> 0.765 -> 0.745: steps of 1 and 2 points count: holds
    m["runs"][2]["final_test_acc"] = 0.745
    assert _judge("table5_dcor_accuracy", m)["ResNet-20"]["word"] == "holds"


def test_gpu_seeds_are_their_own_column_named_by_the_card():
    from fedlib.lab.paths import REPO_ROOT
    from fedlib.lab.tables import paper_verdicts
    run = json.loads((REPO_ROOT / "figures/converged/gpu/metrics/gpu_run.json").read_text())
    assert claims.GPU_CARD == run["bench_dtfl"]["gpu"] and claims.EXTRA_COLUMNS[0]["label"] == "GPU (NVIDIA H200)"
    v = paper_verdicts("dtfl")
    cell = next(c for c in v["claims"] if c["id"] == "accuracy_vs_fedavg_iid")["cells"]["ResNet-20 · GPU (NVIDIA H200)"]
    # gpu metrics, ResNet-20 IID: DTFL 0.7865 / 0.81 / 0.794, FedAvg 0.835 / 0.8135 / 0.8115
    assert cell["labels"] == ["seed 0", "seed 1", "seed 2"]
    assert cell["values"] == [pytest.approx(-4.85), pytest.approx(-0.35), pytest.approx(-1.75)]
    assert cell["words"] == ["fails", "holds", "fails"] and cell["word"] == "not robust across seeds"
    assert "ResNet-20 · GPU (NVIDIA H200)" in next(c for c in v["claims"] if c["id"] == "dtfl4_holds_target_iid")["cells"]


def test_kinds_and_registration():
    kinds = {c.id: c.kind for c in claims.CLAIMS}
    assert {i for i, k in kinds.items() if k == "check"} == {"table2_client_ratio", "table2_server_ratio",
                                                              "dtfl4_holds_target_iid", "dtfl4_holds_target_noniid"}
    # the three claims as written on 2026-11-27 (their fingerprints then); every other one was set on 2026-12-01
    unchanged = {"table1_best_tier_case2": "10cd589dae", "fig3_time_vs_m_case2": "6ec0cfc43c",
                 "table5_dcor_psnr": "46152cb222"}
    for c in claims.CLAIMS:
        assert c.set_after_numbers
        if c.id in unchanged:
            assert (c.fingerprint(), c.registered) == (unchanged[c.id], "2026-11-27"), c.id
        else:
            assert c.registered == "2026-12-01", c.id


def test_trend_over_m_reads_the_scheduler_runs_only():
    # the static tiers run beside the scheduler (rows with a tier, all at M = 7) are not points of Fig. 3's trend
    m = {"runs": _fig3(times={1: 300.0, 4: 250.0, 7: 150.0}, tiers={1: 90.0, 7: 310.0})}
    assert _judge("fig3_time_vs_m_case1", m)["ResNet-20"]["values"] == [[300.0, 250.0, 150.0]]
    # the scheduler's 150 s against the fastest static tier's 90 s: 0.6, fails
    assert _judge("dynamic_vs_best_static_case1", m)["ResNet-20"]["values"] == [pytest.approx(0.6)]


def _paper_scale_root(tmp_path, main, scale):
    """A repository root holding the committed DTFL metrics, with dtfl_3_fig3's runs ``main`` and its paper-scale
    runs ``scale`` (hand-made; None: no paper-scale entry)."""
    import shutil
    from fedlib.lab.paths import REPO_ROOT
    for sub in ("figures/converged/metrics", "figures/converged/gpu/metrics"):
        shutil.copytree(REPO_ROOT / sub, tmp_path / sub)
    path = tmp_path / "figures/converged/metrics/dtfl_3_fig3.json"
    m = json.loads(path.read_text())
    m["runs"] = main
    if scale is not None:
        m["paper_scale"] = {"model": "resnet110", "runs": scale}
    path.write_text(json.dumps(m))
    return tmp_path


def _fig3_110(**kw):
    return [dict(r, model="resnet110") for r in _fig3(**kw)]


def test_paper_scale_column_is_read_from_the_notebooks_metrics_and_names_the_scale(tmp_path):
    from fedlib.lab.tables import paper_verdicts
    label = claims.PAPER_SCALE_LABEL
    # ours: the scheduler 150 s, the fastest static tier 120 s (0.8, fails); the paper's scale: 100 s against
    # 200 s (2.0, holds): the scale gives another word
    main = _fig3(times={1: 300.0, 7: 150.0}, tiers={3: 120.0}) + _fig3(case="case2", times={1: 300.0, 7: 150.0},
                                                                       tiers={3: 120.0})
    scale = _fig3_110(times={1: 400.0, 7: 100.0}, tiers={3: 200.0}) + _fig3_110(case="case2", times={1: 90.0, 7: 100.0},
                                                                               tiers={3: 80.0})
    v = paper_verdicts("dtfl", _paper_scale_root(tmp_path, main, scale))
    assert label in v["columns"]
    cells = {c["id"]: c["cells"] for c in v["claims"]}
    case1, case2 = cells["dynamic_vs_best_static_case1"], cells["dynamic_vs_best_static_case2"]
    assert case1[f"ResNet-110 · {label}"]["values"] == [pytest.approx(2.0)]
    assert case1["ResNet-20"]["word"] == "fails" and case1["ResNet-20"]["reason"]["class"] == "scale"
    assert f"ResNet-110 · {label}: 2.00× holds" in case1["ResNet-20"]["reason"]["text"]
    # case 2 at the paper's scale: 80 / 100 = 0.8, fails as ours: not the scale
    assert case2[f"ResNet-110 · {label}"]["word"] == "fails"
    assert case2["ResNet-20"]["reason"]["class"] == "measured disagreement"
    assert "not the scale" in case2["ResNet-20"]["reason"]["text"]
    # the glance counts the main columns only
    assert v["counts"] == paper_verdicts("dtfl", _paper_scale_root(tmp_path / "b", main, None))["counts"]
