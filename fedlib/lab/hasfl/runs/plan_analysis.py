"""Analyses of HASFL's training runs beside the bound, shared by the training notebooks and the claims: the
constants-mode variants of a method (:func:`variants`, :func:`split_variant`), the paper's claims as ratios
(:func:`claim_ratios`) and the calibration committed at another profile (:func:`committed_fit`). Split out of
:mod:`fedlib.lab.hasfl.runs.train_plan` (which re-exports them); nothing here computes a cached record. The
single-use analyses (the bound's predicted rounds against the measured ones, decisions at several ε, the ε sweep,
the β estimators, a calibration's transfer) are ``hasfl_5_train_figures``' own cells."""
from __future__ import annotations

from fedlib.core.validate import check_choice
from fedlib.lab.hasfl.runs.training import CONSTANTS_MODES

#: Methods run under other constants modes than the settings' (``<method>-<mode>``): Fig. 5's HASFL under every
#: mode (``HASFL-max``: the worst-case constants, same ε rule as the main settings; ``HASFL-calibrated``:
#: :mod:`fedlib.hasfl.bound.calibrate`), Figs. 10 / 11's HABS / HAMS under the pilot and the calibrated constants
VARIANT_MODES = {"HASFL": CONSTANTS_MODES, "HABS": ("pilot", "calibrated"), "HAMS": ("pilot", "calibrated")}


def variants(base: str, own: str) -> tuple[str, ...]:
    """The variant names of ``base`` (:data:`VARIANT_MODES`) for every mode other than ``own``.

    Raises:
        ValueError: ``base`` not HASFL, HABS or HAMS."""
    check_choice("base", base, tuple(VARIANT_MODES))
    return tuple(f"{base}-{m}" for m in VARIANT_MODES[base] if m != own)


def split_variant(method: str) -> tuple[str, str | None]:
    """``(base method, constants mode)`` of a method name: ``"HABS-calibrated"`` -> ``("HABS", "calibrated")``;
    a plain method -> ``(method, None)`` (it uses the settings' constants)."""
    base, _, mode = method.partition("-")
    return (base, mode) if mode in VARIANT_MODES.get(base, ()) else (method, None)


def claim_ratios(rows: list[dict]) -> list[dict]:
    """The paper's claims as measured ratios (seeds averaged): per model and setting, each benchmark's simulated
    time to target / HASFL's (Fig. 6; > 1 = HASFL faster) and HASFL's final accuracy minus the benchmark's;
    per setting, HABS vs the fastest fixed batch size (Fig. 10) and HAMS vs the fastest fixed cut (Fig. 11), one
    row per HABS / HAMS variant (``HABS``, ``HABS-calibrated``, ...: :data:`VARIANT_MODES`). Every row has
    ``claim``, ``model``, ``setting``, ``method`` (the method measured: HASFL for Fig. 6), ``versus``, ``ratio``
    (the other's time / the method's), ``acc_gain`` (final accuracy, method minus other), ``conv_ratio`` (the
    other's converged time by the paper's rule / the method's, each the mean over the seeds whose run converged;
    None when either has no converged run) and
    ``conv_acc_gain`` (converged accuracy, method minus other) and ``note``. ``ratio``
    is None when either run never reached the target (``note`` says which). ``rows``: the training notebooks'
    rows (:func:`fedlib.lab.hasfl.runs.train_plan.decision_row`)."""

    def mean(vals):
        vals = [v for v in vals if v is not None]
        return sum(vals) / len(vals) if vals else None

    def stat(sel, method, **m):
        rs = [r for r in sel if r["method"] == method and all(r[k] == v for k, v in m.items())]
        return mean([r["time_to_target_s"] for r in rs]), mean([r["final_test_acc"] for r in rs])

    def conv(sel, method, other):
        (c0, a0), (c, a) = [(mean([r.get("converged_time_s") for r in sel if r["method"] == x]),
                             mean([r.get("converged_acc") for r in sel if r["method"] == x])) for x in (method, other)]
        return {"conv_ratio": c / c0 if c and c0 else None,
                "conv_acc_gain": a0 - a if a0 is not None and a is not None else None}

    out = []
    fig6 = [r for r in rows if "fig6" in r["figures"]]
    for model, setting in dict.fromkeys((r["model"], r["setting"]) for r in fig6):
        sel = [r for r in fig6 if r["model"] == model and r["setting"] == setting]
        t0, a0 = stat(sel, "HASFL")
        for method in dict.fromkeys(r["method"] for r in sel if r["method"] != "HASFL"):
            t, a = stat(sel, method)
            out.append({"claim": "fig6", "model": model, "setting": setting, "method": "HASFL", "versus": method,
                        "ratio": t / t0 if t and t0 else None, "acc_gain": a0 - a, **conv(sel, "HASFL", method),
                        "note": "" if t and t0 else ("HASFL" if not t0 else method) + " did not reach the target"})
    for fig, base, key in (("fig10", "HABS", "batch"), ("fig11", "HAMS", "cut")):
        sel = [r for r in rows if fig in r["figures"]]
        for setting in dict.fromkeys(r["setting"] for r in sel):
            ss = [r for r in sel if r["setting"] == setting]
            fixed = {v: stat(ss, "fixed", **{key: v}) for v in dict.fromkeys(r[key] for r in ss if r["method"] == "fixed")}
            reached = {v: ta for v, ta in fixed.items() if ta[0] is not None}
            if not reached:
                continue
            best = min(reached, key=lambda v: reached[v][0])
            for method in dict.fromkeys(r["method"] for r in ss if split_variant(r["method"])[0] == base):
                t0, a0 = stat(ss, method)
                out.append({"claim": fig, "model": ss[0]["model"], "setting": setting, "method": method,
                            "versus": f"{key} = {best}", "ratio": reached[best][0] / t0 if t0 else None,
                            "acc_gain": a0 - reached[best][1],
                            **conv([r for r in ss if r["method"] == method or r.get(key) == best and r["method"] == "fixed"],
                                   method, "fixed"),
                            "note": "" if t0 else f"{method} did not reach the target"})
    return out


def committed_fit(profile: str, model: str, width: float) -> tuple[dict, float]:
    """The calibration committed at ``profile`` (its ``hasfl_5_train_figures`` metrics: the first model's fit, first
    seed) and its target accuracy, for ``hasfl_5_train_figures``' transfer table. That fit belongs to the first
    model and width of ``profile``'s parameters, so it is refused for any other.

    Returns:
        ``(fit, target_acc)``: the calibration row (``eps``, ``kappa``, ``lambda``, ...) and its target.

    Raises:
        ValueError: an unknown profile, a profile without committed HASFL metrics, or one whose first model or width
            is not ``model`` / ``width`` (naming both); a committed calibration without a fit.
    """
    import json

    from fedlib.lab.notebooks import PROFILES, notebook_parameters
    from fedlib.lab.params import declared_parameters
    from fedlib.lab.paths import REPO_ROOT
    check_choice("transfer_fit_from", profile, PROFILES)
    nb = REPO_ROOT / "notebooks" / "hasfl" / "hasfl_5_train_figures.ipynb"
    path = REPO_ROOT / "figures" / ("" if profile == "quick" else profile) / "metrics" / "hasfl_5_train_figures.json"
    if not path.is_file():
        raise ValueError(f"transfer_fit_from = {profile!r} has no committed calibration ({path} is missing)")
    params = {**declared_parameters(nb), **notebook_parameters(nb, profile)}   # defaults, then the profile's files
    theirs = (params["models"][0], float(params["widths"][0]))
    if theirs != (model, float(width)):
        raise ValueError(f"transfer_fit_from = {profile!r} calibrated {theirs[0]} at width {theirs[1]:g}, but this "
                         f"run's first model is {model} at width {float(width):g}: a fit applies to its own model")
    other = json.loads(path.read_text())
    fits = [r for r in other["calibration"] if r.get("kappa") is not None]
    if not fits:
        raise ValueError(f"transfer_fit_from = {profile!r}: its committed calibration holds no fit")
    return fits[0], other["target_acc"]
