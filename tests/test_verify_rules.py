"""``./run_all.sh --verify``'s rule table (fedlib.lab.verify.RULES) pinned, and tried on the committed metrics.

Each rule is pinned here by hand (notebook glob, metric-name glob, band), so widening a band, routing a name to
another rule or skipping it fails a test. Then, without running any notebook, every rule is tried on real
committed metrics (``figures/metrics``, ``figures/converged/metrics``: what :func:`verify.committed_dir` reads):
for each notebook and each rule, one of its metrics is moved just inside the pinned band (both ways) and just
outside it, and :func:`verify.compare` must pass the first and flag exactly the second. Every committed metric is
routed to a rule of its own; the only ones not compared are the names listed in :data:`NOT_COMPARED`, each with
its reason.
"""
from __future__ import annotations

import copy
import fnmatch
import json

import pytest

from fedlib.lab import verify
from fedlib.lab.notebooks import PROFILES

# The rule table as it must be, in order (first match wins): (notebook glob, metric-name glob, band). A band is
# "exact", "abs X", "rel X", "not compared", or "unruled" (exact, but marking a metric without a rule of its own).
PINNED = [
    ("*", "elapsed_s", "not compared"),
    ("*", "*_elapsed_s", "not compared"),
    ("*", "solve_s", "not compared"),
    ("*", "wall_s", "not compared"),
    ("*", "*_wall_s", "not compared"),
    ("*", "seconds", "not compared"),
    ("*", "data_source", "not compared"),
    ("hist_*", "*acc*", "abs 0.005"),
    ("hist_*", "comm_to_target", "rel 0.35"),
    ("hist_3*", "*", "rel 0.05"),
    ("hist_*", "*", "exact"),
    ("hasfl_[23]*", "*", "rel 0.001"),
    ("hasfl_6*", "cut1_share", "exact"),
    ("hasfl_6*", "deepest_cut", "exact"),
    ("hasfl_6*", "cuts", "exact"),
    ("hasfl_6*", "b", "exact"),
    ("hasfl_6*", "mean_b", "exact"),
    ("hasfl_6*", "theta", "rel 0.001"),
    ("hasfl_6*", "beta*", "rel 0.001"),
    ("hasfl_6*", "eps", "rel 0.001"),
    ("hasfl_6*", "G2_sum", "rel 0.001"),
    ("hasfl_6*", "sigma2_sum", "rel 0.001"),
    ("hasfl_6*", "vartheta", "rel 0.001"),
    ("dtfl_*", "test_acc_aux", "abs 0.05"),
    ("hasfl_*", "*acc*", "abs 0.03"),
    ("hasfl_*", "acc_gain", "abs 0.03"),
    ("hasfl_*", "floor*", "rel 0.001"),
    ("hasfl_*", "eps", "rel 0.001"),
    ("hasfl_*", "theta*", "rel 0.001"),
    ("hasfl_*", "unreachable", "rel 0.001"),
    ("hasfl_*", "pred_ratio*", "rel 0.001"),
    ("hasfl_*", "kappa", "rel 0.35"),
    ("hasfl_*", "lambda", "rel 0.35"),
    ("hasfl_*", "residual", "rel 0.35"),
    ("hasfl_*", "rounds_*", "rel 0.35"),
    ("hasfl_*", "*ratio", "rel 0.35"),
    ("hasfl_*", "epochs_to_target", "rel 0.35"),
    ("hasfl_*", "rounds", "rel 0.35"),
    ("hasfl_*", "sim_s", "rel 0.35"),
    ("hasfl_*", "extended_from_epochs", "rel 0.35"),
    ("hasfl_*", "scale_factor", "rel 0.35"),
    ("hasfl_*", "b_*", "exact"),
    ("hasfl_*", "batch", "exact"),
    ("hasfl_*", "cut", "exact"),
    ("hasfl_*", "cut_*", "exact"),
    ("hasfl_*", "cuts", "exact"),
    ("hasfl_*", "L_c", "exact"),
    ("hasfl_*", "beta", "rel 0.001"),
    ("hasfl_*", "eps_over_floor1", "rel 0.001"),
    ("hasfl_*", "rule", "exact"),
    ("*", "*acc*", "abs 0.03"),
    ("*", "*loss*", "abs 0.03"),
    ("*", "dcor", "abs 0.03"),
    ("*", "psnr_db", "abs 1"),
    ("*", "rounds_to_target", "rel 0.35"),
    ("*", "*_to_target*", "rel 0.35"),
    ("*", "converged_*", "rel 0.35"),
    ("dtfl_*", "plateau_*", "abs 0.03"),
    ("dtfl_*", "comp_time_s", "rel 0.35"),
    ("dtfl_*", "comm_time_s", "rel 0.35"),
    ("dtfl_[56]*", "ratio", "rel 0.35"),
    ("dtfl_[56]*", "reduction", "abs 0.35"),
    ("dtfl_[56]*", "dtfl_s", "rel 0.35"),
    ("dtfl_[56]*", "baseline_s", "rel 0.35"),
    ("dtfl_5*", "fed*", "rel 0.35"),
    ("dtfl_5*", "splitfed", "rel 0.35"),
    ("dtfl_*", "mean_tier", "exact"),
    ("dtfl_*", "sim_total_s", "exact"),
    ("dtfl_*", "round", "exact"),
    ("dtfl_*", "tier_counts", "exact"),
    ("dtfl_*", "rounds", "exact"),
    ("dtfl_*", "mean_round_s", "exact"),
    ("dtfl_your*", "time_ratio", "rel 0.35"),
    ("dtfl_*", "change_every", "exact"),
    ("*", "notebook", "exact"),
    ("*", "profile", "exact"),
    ("*", "dataset", "exact"),
    ("*", "model", "exact"),
    ("*", "method", "exact"),
    ("*", "setting", "exact"),
    ("*", "case", "exact"),
    ("*", "seed", "exact"),
    ("*", "seeds", "exact"),
    ("*", "M", "exact"),
    ("*", "N", "exact"),
    ("*", "num_clients", "exact"),
    ("*", "fraction", "exact"),
    ("*", "tier", "exact"),
    ("*", "alpha", "exact"),
    ("*", "cut", "exact"),
    ("*", "patches", "exact"),
    ("*", "patch_shuffling", "exact"),
    ("*", "baseline", "exact"),
    ("*", "iid", "exact"),
    ("*", "noniid", "exact"),
    ("*", "paper_client", "exact"),
    ("*", "paper_server", "exact"),
    ("*", "claim", "exact"),
    ("*", "note", "exact"),
    ("*", "figure", "exact"),
    ("*", "figures", "exact"),
    ("*", "versus", "exact"),
    ("*", "width", "exact"),
    ("*", "constants", "exact"),
    ("*", "eps_factor", "exact"),
    ("*", "scale_key", "exact"),
    ("*", "runs", "exact"),
    ("*", "beta_estimator", "exact"),
    ("*", "out_of_sample_seeds", "exact"),
    ("*", "out_of_sample_later_seeds", "exact"),
    ("*", "draw", "exact"),
    ("*", "input", "exact"),
    ("*", "data_label", "exact"),
    ("*", "models", "exact"),
    ("*", "widths", "exact"),
    ("*", "num_devices", "exact"),
    ("*", "scheduler", "exact"),
    ("*", "scheduler_code", "exact"),
    ("*", "runs_out_of_sample", "exact"),
    ("*", "claims_out_of_sample", "exact"),
    ("*", "claims_out_of_sample_calibrated", "exact"),
    ("*", "calibration_transfer", "exact"),
    ("*", "params", "exact"),
    ("*", "MMACs", "exact"),
    ("*", "client_ratio", "exact"),
    ("*", "server_ratio", "exact"),
    ("*", "layers", "exact"),
    ("*", "forward_gflops", "exact"),
    ("*", "backward_gflops", "exact"),
    ("*", "client_gflops", "exact"),
    ("*", "client_model_mb", "exact"),
    ("*", "smashed_kib", "exact"),
    ("dtfl_*", "*", "unruled"),
    ("hasfl_*", "*", "unruled"),
    ("*", "*", "exact"),
]

# The only metric names a verify run does not compare, each with its reason; any other committed metric routed to
# "not compared" (e.g. DTFL's privacy metric dcor) fails test_only_the_listed_names_are_not_compared.
NOT_COMPARED = {
    "elapsed_s": "wall-clock seconds of this machine",
    "*_elapsed_s": "wall-clock seconds of this machine (e.g. HASFL's pilot_elapsed_s)",
    "solve_s": "wall-clock seconds of HASFL's optimiser",
    "wall_s": "wall-clock seconds of this machine",
    "*_wall_s": "wall-clock seconds of this machine (e.g. notebook_wall_s)",
    "seconds": "wall-clock seconds of this machine",
    "data_source": "where this machine found the data set (a path)",
}

# Rules no committed metric is routed to today (tried on a made-up metric of that name instead), with the reason.
NO_COMMITTED_METRIC = {
    ("*", "seconds"): "no notebook records 'seconds' today",
    ("hasfl_*", "acc_gain"): "no HASFL notebook records acc_gain today (and hasfl_*/*acc* matches it first)",
    ("*", "*loss*"): "no committed metric is a loss today",
    ("dtfl_*", "*"): "UNRULED: every committed DTFL metric has a rule of its own",
    ("hasfl_*", "*"): "UNRULED: every committed HASFL metric has a rule of its own",
    ("*", "*"): "catch-all: every committed notebook's metrics match an earlier rule",
}


def _band(text: str) -> tuple[str, float]:
    if text in ("exact", "unruled", "not compared"):
        return text, 0.0
    kind, value = text.split()
    return kind, float(value)


def _name(path: str) -> str:
    return path.rsplit(".", 1)[-1].split("[", 1)[0]


def _index(notebook: str, path: str) -> int:
    """Index in RULES of the rule :func:`verify.rule_for` applies (the first match), by the same globs."""
    name = _name(path)
    return next(i for i, (nb, key, _) in enumerate(verify.RULES)
                if fnmatch.fnmatch(notebook, nb) and fnmatch.fnmatch(name, key))


def _leaves(value, path=""):
    """``(path, container, key)`` of every scalar leaf (``container[key]`` is it), paths as :func:`verify.flatten`
    writes them; an empty list is a leaf of its own."""
    if isinstance(value, dict):
        items = [(k, f"{path}.{k}" if path else str(k)) for k in sorted(value)]
    else:
        items = [(i, f"{path}[{i}]") for i in range(len(value))]
    for k, child in items:
        v = value[k]
        if isinstance(v, (dict, list)) and v:
            yield from _leaves(v, child)
        else:
            yield child, value, k


def _committed():
    """``[(label, notebook, payload)]`` of every committed metrics file that ``verify`` compares."""
    out = []
    for profile in PROFILES:
        for f in sorted(verify.committed_dir(profile).glob("*.json")):
            out.append((f"{profile}/{f.stem}", f.stem, json.loads(f.read_text())))
    return out


COMMITTED = _committed()


def _moved(value, kind: str, band: float, where: str):
    """``value`` moved by ``where`` ("in+", "in-": just inside the band either way; "out": just outside)."""
    if isinstance(value, bool):
        return value if where != "out" else not value
    if value is None:
        return None if where != "out" else 1.0
    if value == []:                                     # an empty list: gone (None) outside
        return [] if where != "out" else None
    if isinstance(value, str):
        return value if where != "out" else value + "~"
    sign = -1.0 if where == "in-" else 1.0
    if kind == "abs":
        return value + sign * (0.9 if where != "out" else 1.1) * band
    if kind == "rel":
        if value == 0:
            return 0.0 if where != "out" else 1e-6
        return value * (1 + sign * (0.9 if where != "out" else 1.1) * band)
    # exact (and unruled): equal up to rounding inside; the smallest change that is not rounding outside
    if where != "out":
        return value if isinstance(value, int) else value * (1 + sign * 1e-12)
    return value + 1 if isinstance(value, int) else value + 1e-6 * max(1.0, abs(value))


def _samples(payload, notebook):
    """One leaf per rule of RULES in this payload: its first number that is not 0 (else its first leaf of any
    other kind), so that each rule is tried on what the notebook really records."""
    pick = {}
    for path, container, key in _leaves(payload):
        i = _index(notebook, path)
        v = container[key]
        good = isinstance(v, (int, float)) and not isinstance(v, bool) and v != 0
        if i not in pick or (good and not pick[i][3]):
            pick[i] = (path, container, key, good)
    return {i: p[:3] for i, p in pick.items()}


def test_the_rule_table_is_pinned():
    """Widening a band (PILOT's rel 1e-3 to 1e-2), routing a name to another rule (HASFL's b_* decisions to the
    ±35 % read-off band) or replacing a rule by a skip (dcor) changes a row of this table."""
    got = [(nb, key, "unruled" if tol is verify.UNRULED else tol.text()) for nb, key, tol in verify.RULES]
    assert len(got) == len(PINNED)
    diff = [(i, want, have) for i, (want, have) in enumerate(zip(PINNED, got)) if want != have]
    assert not diff, f"rules changed (index, pinned, now): {diff}"
    # the named bands themselves
    assert (verify.PILOT.kind, verify.PILOT.value) == ("rel", 1e-3)
    assert (verify.READ_OFF.kind, verify.READ_OFF.value) == ("rel", 0.35)
    assert (verify.ACC_CONV.kind, verify.ACC_CONV.value) == ("abs", 0.03)
    assert (verify.ACC_MLP.kind, verify.ACC_MLP.value) == ("abs", 0.005)
    assert verify.DECISION.kind == verify.CONFIG.kind == verify.PROFILED.kind == verify.SIMULATED.kind == "exact"


def test_committed_metrics_are_there_to_try_the_rules_on():
    labels = {label for label, _, _ in COMMITTED}
    for nb in ("dtfl_1_profiles", "dtfl_2_table1", "dtfl_3_fig3", "dtfl_4_training", "dtfl_5_baselines",
               "dtfl_6_scaling", "dtfl_7_privacy", "hasfl_1_latency", "hasfl_2_bound", "hasfl_3_optimiser",
               "hasfl_4_train_experiments", "hasfl_5_train_figures"):
        assert f"quick/{nb}" in labels and f"converged/{nb}" in labels, nb
    assert {"quick/hist_1_experiments", "quick/hist_2_figures", "quick/hist_3_bounds"} <= labels
    # the leaves moved below are the leaves verify compares
    for label, nb, payload in COMMITTED:
        assert [p for p, _, _ in _leaves(payload)] == list(verify.flatten(payload)), label


def test_only_the_listed_names_are_not_compared_and_every_metric_has_a_rule():
    skipped, unruled, compared = set(), set(), 0
    for label, nb, payload in COMMITTED:
        flat = verify.flatten(payload)
        rows = {r["metric"] for r in verify.compare(nb, payload, payload)}
        for path in flat:
            tol = verify.rule_for(nb, path)
            if tol is verify.UNRULED or _index(nb, path) == len(verify.RULES) - 1:
                unruled.add((label, path))
            if tol.kind == "skip":
                assert path not in rows
                if not any(fnmatch.fnmatch(_name(path), g) for g in NOT_COMPARED):
                    skipped.add((label, path))
            else:
                assert path in rows, (label, path)
                compared += 1
    assert not skipped, f"metrics silently not compared: {sorted(skipped)[:10]}"
    assert not unruled, f"metrics without a rule of their own: {sorted(unruled)[:10]}"
    assert compared > 10000
    # each listed name is a rule of "not compared", and nothing else is
    skips = {key for nb, key, tol in verify.RULES if tol.kind == "skip"}
    assert skips == set(NOT_COMPARED)


def test_each_rule_passes_just_inside_its_band_and_flags_just_outside_on_committed_metrics():
    """Per committed notebook, one metric per rule is moved just inside the pinned band (up, down: every row
    passes) and just outside it (exactly the moved rows are flagged; "not compared" ones never appear)."""
    pinned = {i: _band(text) for i, (_, _, text) in enumerate(PINNED)}
    assert len(pinned) == len(verify.RULES)
    tried = set()
    problems = []
    for label, nb, payload in COMMITTED:
        same = verify.compare(nb, payload, payload)
        assert same and all(r["ok"] for r in same), label
        picks = _samples(payload, nb)
        for where in ("in+", "in-", "out"):
            rerun = copy.deepcopy(payload)
            moved, at = {}, {p: c for p, c, _ in _leaves(rerun)}
            for i, (path, _, key) in picks.items():
                kind, band = pinned[i]
                at[path][key] = _moved(at[path][key], kind, band, where)
                moved[path] = kind
            rows = {r["metric"]: r for r in verify.compare(nb, payload, rerun)}
            for path, kind in moved.items():
                row = rows.get(path)
                if kind == "not compared":
                    if row is not None:
                        problems.append((label, where, path, "compared, but pinned as not compared"))
                elif row is None:
                    problems.append((label, where, path, "not compared (skipped)"))
                elif row["ok"] != (where != "out"):
                    problems.append((label, where, path, PINNED[_index(nb, path)][2], row["committed"],
                                     row["rerun"], "ok" if row["ok"] else "OFF"))
            others = [m for m, r in rows.items() if m not in moved and not r["ok"]]
            assert not others, (label, where, others[:5])
        tried |= set(picks)
    assert not problems, f"{len(problems)} rule(s) off their pinned band: {problems[:8]}"
    untried = {(PINNED[i][0], PINNED[i][1]) for i in range(len(PINNED)) if i not in tried}
    assert untried == set(NO_COMMITTED_METRIC), untried ^ set(NO_COMMITTED_METRIC)


@pytest.mark.parametrize("nb_glob, key_glob", sorted(NO_COMMITTED_METRIC))
def test_rules_without_a_committed_metric_keep_their_band_on_a_made_up_one(nb_glob, key_glob):
    notebook = {"*": "dtfl_9_new", "dtfl_*": "dtfl_9_new", "hasfl_*": "hasfl_9_new"}[nb_glob]
    if (nb_glob, key_glob) == ("*", "*"):
        notebook = "other_1"
    name = key_glob.replace("*", "x")
    i = next(j for j, (a, b, _) in enumerate(PINNED) if (a, b) == (nb_glob, key_glob))
    first = _index(notebook, f"runs[0].{name}")
    # acc_gain is matched by the hasfl_* *acc* rule above it first: the same band, pinned all the same
    assert first == i or (key_glob == "acc_gain" and PINNED[first][1] == "*acc*" and PINNED[first][2] == PINNED[i][2])
    kind, band = _band(PINNED[i][2])
    tol = verify.rule_for(notebook, f"runs[0].{name}")
    for value in (0.42, 17, 2500.0):
        assert tol.ok(value, _moved(value, kind, band, "in+")) and tol.ok(value, _moved(value, kind, band, "in-"))
        assert tol.ok(value, _moved(value, kind, band, "out")) == (kind == "not compared"), (value, kind)


def _payload(label):
    return next(p for lab, _, p in COMMITTED if lab == label)


def test_hasfl_pilot_constants_are_held_to_one_part_in_a_thousand():
    """HASFL's G² from the pilot: a 0.5 % error is off (PILOT is rel 1e-3: widened to 1e-2 it would pass)."""
    committed = _payload("converged/hasfl_2_bound")
    g2 = committed["constants"]["G2"][0]
    assert g2 > 0
    for factor, ok in ((1.0005, True), (0.9995, True), (1.005, False), (1.0015, False)):
        rerun = copy.deepcopy(committed)
        rerun["constants"]["G2"][0] = g2 * factor
        row = next(r for r in verify.compare("hasfl_2_bound", committed, rerun) if r["metric"] == "constants.G2[0]")
        assert row["ok"] is ok and row["tolerance"] == "rel 0.001", (factor, row)


def test_hasfl_batch_size_decisions_are_exact():
    """A +30 % batch size decision is off (b_* is DECISION, exact; the ±35 % read-off band would pass it)."""
    committed = _payload("converged/hasfl_4_train_experiments")
    i = next(i for i, r in enumerate(committed["runs"]) if r.get("b_mean"))
    for key in ("b_mean", "b_max"):
        value = committed["runs"][i][key]
        for new, ok in ((value, True), (value * 1.3, False), (value + 1, False)):
            rerun = copy.deepcopy(committed)
            rerun["runs"][i][key] = new
            row = next(r for r in verify.compare("hasfl_4_train_experiments", committed, rerun)
                       if r["metric"] == f"runs[{i}].{key}")
            assert row["ok"] is ok and row["tolerance"] == "exact", (key, new, row)


def test_dtfl_privacy_metric_dcor_is_compared_within_its_band():
    """DTFL's distance correlation is compared (abs 0.03), never dropped from the comparison."""
    for label in ("quick/dtfl_7_privacy", "converged/dtfl_7_privacy"):
        committed = _payload(label)
        runs = [i for i, r in enumerate(committed["runs"]) if isinstance(r.get("dcor"), float)]
        assert runs, label
        for delta, ok in ((0.02, True), (-0.02, True), (0.04, False), (-0.04, False)):
            rerun = copy.deepcopy(committed)
            for i in runs:
                rerun["runs"][i]["dcor"] += delta
            rows = {r["metric"]: r for r in verify.compare("dtfl_7_privacy", committed, rerun)}
            for i in runs:
                row = rows.get(f"runs[{i}].dcor")
                assert row is not None, f"{label}: runs[{i}].dcor is not compared"
                assert row["ok"] is ok and row["tolerance"] == "abs 0.03", (label, delta, row)
