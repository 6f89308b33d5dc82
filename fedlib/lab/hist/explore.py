"""HIST's explorer (``notebooks/hist/hist_explore.ipynb``): HIST's communication against HFedAvg's for a setup set
with sliders (cells N, edge interval H, cloud interval E, clients U, MLP width, per-client budget), and the Theorem 1
bound at pilot constants read from the store. HIST paper: Fang et al., *Submodel Partitioning in Hierarchical
Federated Learning*, arXiv:2310.17890 (Sec. III-B: accounting; Sec. IV: condition (12), Theorem 1 eq. (13)).

Nothing numerical here: communication comes from :func:`fedlib.hist.comm_per_round` and
:func:`fedlib.hist.rounds_for_budget` (the load of R rounds is R times a round's, as :func:`fedlib.hist.run_hist`
records it), every combination is checked by :class:`fedlib.hist.HistConfig`, the bound is
:func:`fedlib.hist.estimate.bound_sweeps` and :mod:`fedlib.hist.theory`'s step-size condition. Units: communication
in L0 (one full model; its size is the library MLP's parameter count), iterations in client SGD steps.

The constants (L, σ², δ1², δ2², f(x̄⁰) − f*, ‖x̄‖²) are ``hist_3_bounds``' pilot record at the profile (its
parameters there give the same store key): an HFedAvg pilot with 3 cells, hist_3's U, H and E, and the library's
default width (``pilot_constants`` takes none). Moving the width, U, H or E here does not re-estimate them; the
notes say so. A missing record is never trained, except at smoke (seconds, by hist_3's own function and key).

Also here, for the notebook's Verdict and the generated text: the claim ``hist_explore`` judges at the controls'
state (:func:`claims`), and the explorer the notebook builds at its defaults (:func:`default_explorer`).

HIST (Fang et al., arXiv:2310.17890), Sec. III-B: *"HIST reduces the communication consumption of the global server,
edge server, and client to 1/N of what would be required by the standard hierarchical FedAvg algorithm."* The
explorer's table is that accounting (:func:`fedlib.hist.comm_per_round`, in L0), so the verdict checks the claim at
the controls' N, H, E and U: the largest of HIST's three loads per round over HFedAvg's must be at most 1/N. It
holds by the accounting's construction; what training shows at equal communication is
``hist_1_experiments``' verdict (accuracy, communication to 75 %).
"""
from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field, replace
from typing import Any, Mapping

from fedlib.lab.explore import Control, Explorer, check_export_path
from fedlib.core.validate import check_choice, check_float, check_int, check_list
from fedlib.hist.config import METHODS, SETTINGS, HistConfig, comm_per_round, rounds_for_budget
from fedlib.lab.verdicts import RESOLUTION_DIGITS, AtMost, Claim

#: the controls' ranges (sliders cannot leave them; defaults outside them are refused by :func:`check_parameters`)
RANGES = {"N": (2, 12), "H": (1, 200), "E": (1, 2000), "num_clients": (2, 300), "hidden": (2, 1200),
          "comm_budget_L0": (0.1, 1000.0), "gamma": (1e-8, 1.0)}
LABELS = {"N": "cells N", "H": "edge interval H", "E": "cloud interval E (iterations / round)",
          "num_clients": "clients U", "hidden": "MLP width (hidden units)", "comm_budget_L0": "budget per client (L0)",
          "gamma": "step size γ (bound)"}
SWEEPS = ("N", "H")
BOUND_FORMS = ("telescoped", "printed")
NAMES = {"hist": "HIST", "hfedavg": "HFedAvg"}


def check_parameters(p: Mapping) -> None:
    """The explorer notebook's parameters (names as :func:`explorer`'s), before any store read.

    Raises:
        ValueError / ParameterTypeError: naming the parameter: a value outside :data:`RANGES`, an unknown setting,
        sweep or bound form, an impossible combination (:class:`HistConfig`'s message: N must divide U and the
        width, E a multiple of H), ``export_path`` not a ``.json`` path in an existing folder."""
    check_list("settings", p["settings"], lambda k, v: check_choice(k, v, SETTINGS), distinct=True)
    check_choice("bound_form", p["bound_form"], BOUND_FORMS)
    check_choice("sweep", p["sweep"], SWEEPS)
    for name, (low, high) in RANGES.items():
        (check_float if isinstance(low, float) else check_int)(name, p[name], low, high)
    HistConfig(num_cells=p["N"], num_clients=p["num_clients"], hidden=p["hidden"], H=p["H"], E=p["E"])
    if check_export_path(p.get("export_path", "")) and not p["export_path"].lower().endswith(".json"):
        raise ValueError(f"export_path must be a .json file in an existing folder (none is created), got "
                         f"{p['export_path']!r}")


@dataclass
class HistSetup:
    """What every update shares: the profile, ``hist_3_bounds``' parameters there (the pilot's key), the store,
    the bound form, the pilot's width, and the pilot records read so far or why one is missing."""

    profile: str
    pilot_params: dict
    store: object
    bound_form: str
    width: int = field(default_factory=lambda: HistConfig().hidden)   # pilot_constants' MLP: the default width
    records: dict = field(default_factory=dict)
    errors: dict = field(default_factory=dict)


def setup(profile: str, bound_form: str = "telescoped", store=None) -> HistSetup:
    """``hist_3_bounds``' parameters at ``profile`` and the store (default :func:`fedlib.lab.hist.result_store`, which
    follows the active profile: ``setup_notebook`` or :func:`fedlib.lab.paths.use_profile` sets it).

    Raises:
        ValueError: unknown profile or one without HIST files; ``profile`` not the active one when ``store`` is None."""
    from fedlib.lab import paths
    from fedlib.lab.notebooks import PROFILES, notebook_parameters
    from fedlib.lab.params import declared_parameters
    from fedlib.lab.hist.experiments import result_store

    check_choice("profile", profile, PROFILES)
    check_choice("bound_form", bound_form, BOUND_FORMS)
    if store is None and profile != paths.active_profile():
        raise ValueError(f"profile {profile!r} is not the active profile {paths.active_profile()!r}: call "
                         f"fedlib.lab.paths.use_profile({profile!r}) first (setup_notebook does) or pass store=")
    nb = paths.REPO_ROOT / "notebooks" / "hist" / "hist_3_bounds.ipynb"
    params = {**declared_parameters(nb), **notebook_parameters(nb, profile)}
    return HistSetup(profile, params, store if store is not None else result_store(), bound_form)


def pilot(st: HistSetup, setting: str) -> dict:
    """``hist_3_bounds``' pilot record of ``setting`` (its key: the cell ``pilot_configs``), read once; computed
    only at smoke without ``FEDLIB_CACHE_ONLY``, by hist_3's function.

    Raises:
        ValueError: no record: the message names the command that computes it."""
    from fedlib.lab.store import cache_only
    if setting in st.errors:
        raise ValueError(st.errors[setting])
    if setting not in st.records:
        cfg = dict(kind="hist_constants", setting=setting, **{k: st.pilot_params[k] for k in (
            "num_cells", "H", "E", "pilot_rounds", "num_clients", "lr", "batch_size", "seed", "sigma_draws",
            "smoothness_clients", "power_iters", "dataset")})
        if not st.store.has(cfg) and (st.profile != "smoke" or cache_only()):
            st.errors[setting] = (f"no pilot constants of hist_3_bounds for setting {setting!r} in the {st.profile} "
                                  f"store: `./run_all.sh --profile {st.profile} --only hist_3` computes them")
            raise ValueError(st.errors[setting])
        from fedlib.hist.estimate import constants_record
        st.records[setting] = st.store.get_or_run(cfg, functools.partial(constants_record, cfg,
                                                                          st.pilot_params["device"]))
    return st.records[setting]


@functools.lru_cache(maxsize=16)
def model_size(hidden: int) -> tuple[int, int]:
    """L0 of the library's MLP 784-``hidden``-10: ``(floats, bytes)`` (parameter count, its tensors' bytes)."""
    from fedlib.hist.model import MLP
    params = list(MLP(hidden=hidden).parameters())
    return sum(p.numel() for p in params), sum(p.numel() * p.element_size() for p in params)


def _config(**kw) -> HistConfig | None:
    """The :class:`HistConfig` of ``kw``, or None where the library refuses it (a sweep's invalid points)."""
    try:
        return HistConfig(**kw)
    except ValueError:
        return None


def compute(st: HistSetup, *, N: int, H: int, E: int, num_clients: int, hidden: int, comm_budget_L0: float,
            gamma: float, setting: str, sweep: str) -> dict:
    """HIST against HFedAvg at one setup, and the figure's sweep over N or H (its valid values).

    Returns:
        ``inputs``; ``configs`` {method: HistConfig with the R rounds of the budget}; ``per_round`` {method:
        comm_per_round's dict, L0}; ``to_budget`` {method: R × per_round, L0}; ``L0`` (floats, bytes);
        ``sweep`` {``x``: [values], ``client`` / ``rounds``: {method: [one per x]}, ``gamma_max``: [one per x] or
        None}; ``bound``: bound_sweeps' dict (vs_N over the pilot's N dividing U, T = HIST's R·E) or None;
        ``step_size``: step_size_terms at (N, H, E) with ``gamma_ok`` or None; ``pilot``: the record or None;
        ``note``: why there is no bound; ``width``, ``profile``, ``pilot_params``: the constants' provenance.

    Raises:
        ValueError / ParameterTypeError: naming the field: NaN, negative, N not dividing U or the width, E not a
        multiple of H, unknown setting or sweep (a missing pilot is no error: ``note`` says why)."""
    from fedlib.hist.estimate import bound_sweeps
    from fedlib.hist.theory import step_size_ok, step_size_terms

    base = HistConfig(setting=check_choice("setting", setting, SETTINGS), num_cells=N, num_clients=num_clients,
                      hidden=hidden, H=H, E=E)
    check_float("gamma", gamma, 0, low_open=True)
    check_choice("sweep", sweep, SWEEPS)
    per_round = {m: comm_per_round(m, N, num_clients, H, E) for m in METHODS}
    one = per_round["hfedavg"]["client"]
    if check_float("comm_budget_L0", comm_budget_L0, 0, low_open=True) < one:   # as hist_1's and hist_2's checks refuse
        raise ValueError(f"comm_budget_L0 = {comm_budget_L0:g} L0 is below one HFedAvg round's upload per client "
                         f"({one:g} L0 at H = {H}, E = {E}): no round fits the budget")
    configs = {m: replace(base, method=m, global_rounds=rounds_for_budget(m, N, H, E, comm_budget_L0))
               for m in METHODS}
    to_budget = {m: {k: configs[m].global_rounds * v for k, v in per_round[m].items()} for m in METHODS}
    key = "num_cells" if sweep == "N" else "H"
    at = [c for x in range(RANGES[sweep][0], RANGES[sweep][1] + 1) if (c := _config(**dict(vars(base), **{key: x})))]
    sw = {"x": [getattr(c, key) for c in at], "gamma_max": None,
          "client": {m: [comm_per_round(m, c.num_cells, c.num_clients, c.H, c.E)["client"] for c in at]
                     for m in METHODS},
          "rounds": {m: [rounds_for_budget(m, c.num_cells, c.H, c.E, comm_budget_L0) for c in at] for m in METHODS}}
    out = {"inputs": dict(N=N, H=H, E=E, num_clients=num_clients, hidden=hidden, comm_budget_L0=comm_budget_L0,
                          gamma=gamma, setting=setting, sweep=sweep),
           "configs": configs, "per_round": per_round, "to_budget": to_budget, "L0": model_size(hidden), "sweep": sw,
           "bound": None, "step_size": None, "pilot": None, "note": "", "width": st.width, "profile": st.profile,
           "pilot_params": {k: st.pilot_params[k] for k in ("num_cells", "H", "E", "num_clients", "pilot_rounds",
                                                              "seed", "dataset")}}
    try:
        rec = out["pilot"] = pilot(st, setting)
    except ValueError as err:
        out["note"] = str(err)
        return out
    p, cpc = st.pilot_params, [base.clients_per_cell] * N
    sw["gamma_max"] = [step_size_terms(rec["L"], [c.clients_per_cell] * c.num_cells, c.H, c.E)["gamma_max"]
                       for c in at]
    out["step_size"] = dict(step_size_terms(rec["L"], cpc, H, E), gamma_ok=step_size_ok(gamma, rec["L"], cpc, H, E))
    ns = [n for n in p["num_cells"] if _config(method="hfedavg", num_cells=n, num_clients=num_clients)]
    if not ns:
        out["note"] = f"none of the pilot's N {p['num_cells']} divides U = {num_clients} (eq. 13 needs δ²(N))"
        return out
    out["bound"] = bound_sweeps(rec, ns, num_clients, H, E, configs["hist"].total_steps, gamma, rec["mean_sq_norm"],
                                p["H_grid"], p["E_over_H_grid"], p["T_grid"], st.bound_form)
    return out


def table_view(result: dict):
    """Communication per global round and in the budget's R rounds (L0), HIST vs HFedAvg and their ratio."""
    from fedlib.lab import story
    rows = []
    for m in METHODS:
        c, r, b = result["configs"][m], result["per_round"][m], result["to_budget"][m]
        rows.append({"method": NAMES[m], "client": r["client"], "edge": r["edge_server"], "cloud": r["cloud"],
                     "rounds": c.global_rounds, "b_client": b["client"], "b_edge": b["edge_server"],
                     "b_cloud": b["cloud"], "T": c.total_steps, "units": c.submodel_hidden})
    rows.append({"method": "HIST / HFedAvg", **{k: rows[0][k] / rows[1][k] for k in rows[0] if k != "method"}})
    cols = list(rows[0])
    return story.table(rows, cols, formats={k: ".3g" for k in cols[1:]}, headers={
        "client": "client / round (L0)", "edge": "edge server / round (L0)", "cloud": "cloud / round (L0)",
        "rounds": "global rounds R in the budget", "b_client": "client in R rounds (L0)",
        "b_edge": "edge server in R rounds (L0)", "b_cloud": "cloud in R rounds (L0)",
        "T": "client iterations T = R·E", "units": "hidden units a client trains"})


def notes_view(result: dict):
    """L0's size, Theorem 1 and condition (12) at the current setup, and the constants' provenance (markdown)."""
    from fedlib.lab import story
    from fedlib.lab.hist.claims import SETTINGS as SETTING_NAMES
    v, pp, (floats, nbytes), w = result["inputs"], result["pilot_params"], result["L0"], result["width"]
    lines = [f"L0 = one full model, the MLP 784-{v['hidden']}-10: {floats:,} floats ({nbytes:,} bytes); per edge "
             f"aggregation a HIST client sends L0/{v['N']}, an HFedAvg client L0 (Sec. III-B)."]
    prov = (f"`hist_3_bounds`' pilot at profile {result['profile']} ({SETTING_NAMES.get(v['setting'], v['setting'])}; "
            f"{pp['pilot_rounds']}-round HFedAvg, U = {pp['num_clients']}, H = {pp['H']}, E = {pp['E']}, "
            f"width {w}, seed {pp['seed']})")
    rec, b, s = result["pilot"], result["bound"], result["step_size"]
    if b is None:
        lines.append(f"**No Theorem 1 bound here:** {result['note']}. The bound uses the constants of {prov}.")
    else:
        at = b["vs_N"].get(v["N"])
        lines.append(f"Theorem 1 (eq. 13) at T = {b['T']:,} (HIST's R·E) and γ = {v['gamma']:g}: "
                     + (f"bound {at['total']:.3g}" if at else f"no bound at N = {v['N']} (δ1², δ2² measured for N "
                        f"∈ {pp['num_cells']} only)") + f". Condition (12) at N = {v['N']}, H = {v['H']}, E = {v['E']}"
                     f" allows γ ≤ {s['gamma_max']:.3g}: γ {'satisfies' if s['gamma_ok'] else 'violates'} it.")
        lines.append(f"Constants of {prov}: L = {rec['L']:.3g}, σ² = {rec['sigma2']:.3g}, f(x̄⁰) − f* ≤ "
                     f"{rec['f_gap']:.3g}, ‖x̄‖² = {rec['mean_sq_norm']:.3g}.")
    moved = [f"{k} = {v[k]} (pilot {want})" for k, want in (
        ("hidden", w), ("num_clients", pp["num_clients"]), ("H", pp["H"]), ("E", pp["E"])) if v[k] != want]
    if moved:
        lines.append(f"Your {', '.join(moved)}: the bound uses the constants measured at the pilot's values, width "
                     f"{w} (not rescaled); Ñ, E and T are yours.")
    return story.markdown("\n\n".join(lines))


def _plain_log_ticks(ax) -> None:
    """A log y-axis with at most 6 plain-text ticks (``1e-06``), no minor ticks: mathtext labels triple the
    figure's rendering time."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator
    ax.yaxis.set_major_locator(LogLocator(base=10, numticks=6))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:.0e}" if y < 1e-3 or y >= 1e4 else f"{y:g}"))
    ax.yaxis.set_minor_locator(NullLocator())


def figure_view(result: dict):
    """(a) client load per round and (b) global rounds in the budget, HIST vs HFedAvg, vs N or H; (c) eq. (13)'s
    terms vs N (the pilot's N); (d) the largest γ of condition (12) vs N or H. The dotted line: the current value."""
    from fedlib.lab.plotting import colour, label_log_axis, new_figure
    from fedlib.lab.hist.plots import TERM_LABELS, n_style
    v, sw, b = result["inputs"], result["sweep"], result["bound"]
    x, name = sw["x"], {"N": "cells N", "H": "edge interval H (client iterations)"}[v["sweep"]]
    fig, axes = new_figure(ncols=2, nrows=2, width=4.6, height=3.2)
    for ax, key, label in ((axes[0, 0], "client", "client upload per global round (L0)"),
                           (axes[0, 1], "rounds", "global rounds within the budget")):
        for i, m in enumerate(METHODS):
            ax.plot(x, sw[key][m], marker=".", color=colour(i), ls="-" if m == "hist" else "--", label=NAMES[m])
        ax.axvline(v[v["sweep"]], color="0.5", lw=0.8, ls=":")
        ax.set(xlabel=name, ylabel=label, yscale="log")
        label_log_axis(ax)
        ax.legend(fontsize=8)
    fixed = f"N = {v['N']}" if v["sweep"] == "H" else f"H = {v['H']}"
    axes[0, 0].set_title(f"(a) per round, E = {v['E']}, {fixed}")
    axes[0, 1].set_title(f"(b) rounds in {v['comm_budget_L0']:g} L0 per client")
    if b is None:
        for ax in axes[1]:
            ax.axis("off")
        axes[1, 0].text(0, 0.5, "No Theorem 1 bound: " + result["note"], va="center", fontsize=8, wrap=True)
    else:
        ax, ns = axes[1, 0], sorted(b["vs_N"])
        for i, term in enumerate(TERM_LABELS):
            ax.plot(ns, [b["vs_N"][n][term] for n in ns], **n_style(i), label=TERM_LABELS[term])
        ax.plot(ns, [b["vs_N"][n]["total"] for n in ns], color="k", ls="--", lw=1, label="total")
        ax.axvline(v["N"], color="0.5", lw=0.8, ls=":")
        ax.set(yscale="log", xlabel="cells N", ylabel="bound term", xticks=ns,
               title=f"(c) eq. 13, γ = {v['gamma']:g}, T = {b['T']:,}")
        ax.set_ylim(top=ax.get_ylim()[1] * 1e4)                 # room for the legend above the curves
        ax.legend(fontsize=7, ncol=2, loc="upper center")
        _plain_log_ticks(ax)
        ax = axes[1, 1]
        ax.plot(x, sw["gamma_max"], marker=".", color=colour(0), label="largest γ of (12)")
        ax.axhline(v["gamma"], color=colour(3), ls="--", lw=1, label=f"γ = {v['gamma']:g}")
        ax.axvline(v[v["sweep"]], color="0.5", lw=0.8, ls=":")
        ax.set(xlabel=name, ylabel="γ_max", yscale="log", title="(d) step-size condition (12)")
        _plain_log_ticks(ax)
        ax.legend(fontsize=8)
    fig.subplots_adjust(left=0.09, right=0.98, bottom=0.08, top=0.95, wspace=0.3, hspace=0.35)  # tight_layout: 0.3 s
    return fig


def export_json(result: dict) -> str:
    """The state shown, as JSON text: inputs, per method R, T and the communication per round and in R rounds (L0),
    L0 in floats and bytes, eq. (13)'s terms at N (null: none, ``note`` says why), γ_max of (12), the pilot."""
    from fedlib import __version__
    at = (result["bound"] or {}).get("vs_N", {}).get(result["inputs"]["N"])
    out = {"fedlib_version": __version__, "source": "HIST, arXiv:2310.17890", "inputs": result["inputs"],
           "L0_floats": result["L0"][0], "L0_bytes": result["L0"][1],
           "methods": {m: {"global_rounds": result["configs"][m].global_rounds, "T": result["configs"][m].total_steps,
                           "per_round_L0": result["per_round"][m], "to_budget_L0": result["to_budget"][m]}
                       for m in METHODS},
           "theorem1": at, "gamma_max": (result["step_size"] or {}).get("gamma_max"), "note": result["note"],
           "pilot": {"profile": result["profile"], "width": result["width"], **result["pilot_params"]}}
    return json.dumps(out, indent=1)


def explorer(profile: str, settings=("noniid", "cell_iid"), N: int = 3, H: int = 40, E: int = 200,
             num_clients: int = 60, hidden: int = 300, comm_budget_L0: float = 30.0, gamma: float = 0.01,
             bound_form: str = "telescoped", sweep: str = "N", store=None) -> Explorer:
    """The explorer: a slider per number (:data:`RANGES`, starting at the values given), dropdowns for the setting
    (``settings``) and the figure's x-axis, :func:`compute` and the views :func:`table_view`, :func:`notes_view`,
    :func:`figure_view`, exported by :func:`export_json`. The first setting's pilot is read here (computed at smoke
    when missing; a missing one is shown in place).

    Raises:
        ValueError / ParameterTypeError: as :func:`check_parameters` and :func:`setup`."""
    values = dict(N=N, H=H, E=E, num_clients=num_clients, hidden=hidden, comm_budget_L0=comm_budget_L0, gamma=gamma)
    check_parameters(dict(values, settings=list(settings), bound_form=bound_form, sweep=sweep))
    st = setup(profile, bound_form, store)
    try:
        pilot(st, settings[0])
    except ValueError:
        pass                                          # the views say why
    controls = [Control(k, LABELS[k], "float" if isinstance(RANGES[k][0], float) else "int", values[k], *RANGES[k],
                        log=k in ("comm_budget_L0", "gamma"), help=LABELS[k]) for k in values]
    controls += [Control("setting", "data setting (constants)", "choice", settings[0], options=tuple(settings)),
                 Control("sweep", "figure's x-axis", "choice", sweep, options=SWEEPS)]
    return Explorer(controls, functools.partial(compute, st), [table_view, notes_view, figure_view],
                    view_keys=[None, None, lambda r: tuple(sorted(r["inputs"].items()))], to_json=export_json)


# --- the notebook's verdict: the claim judged at the controls' state, and the default explorer ----------

NOTEBOOK = "hist_explore"
LOADS = ("client", "edge_server", "cloud")


def largest_share(result: Mapping[str, Any]) -> dict:
    """``{"ours": [max over client, edge server and cloud of HIST's load per round / HFedAvg's]}`` (dimensionless,
    rounded to :data:`fedlib.lab.verdicts.RESOLUTION_DIGITS`). Raises ``KeyError`` when ``result`` lacks
    ``per_round`` (then no verdict)."""
    hist, fed = result["per_round"]["hist"], result["per_round"]["hfedavg"]
    return {"ours": [round(max(hist[k] / fed[k] for k in LOADS), RESOLUTION_DIGITS)]}


def claims(result: Mapping[str, Any]) -> list[Claim]:
    """The claim at the result's N (its threshold is 1/N, rounded as the value is)."""
    n = result["inputs"]["N"]
    return [Claim("explore_loads_1_over_n", f"HIST's loads per round are 1/N of HFedAvg's (N = {n})", "Sec. III-B",
                  f"1/N = {1 / n:.3g}", NOTEBOOK, AtMost(target=round(1 / n, RESOLUTION_DIGITS), digits=3),
                  largest_share,
                  why="Sec. III-B's summary sentence; the largest of the client's, an edge server's and the cloud's "
                      "ratio must not exceed 1/N (no partly band: the paper gives the exact share).")]


def default_explorer(params: Mapping[str, Any]):
    """The explorer the notebook builds from its parameters ``params`` (its parameters cell's values), reading the
    profile's committed store directly where there is one (the notebook reads it through the active profile's
    store, which would create the local cache folder: ``python -m fedlib.lab.tables`` creates none)."""
    from fedlib.lab.paths import committed_store_dir
    from fedlib.lab.hist.experiments import result_store
    committed = committed_store_dir(params["profile"])
    store = result_store(str(committed)) if committed is not None and committed.is_dir() else None
    return explorer(params["profile"], params["settings"], N=params["N"], H=params["H"], E=params["E"],
                    num_clients=params["num_clients"], hidden=params["hidden"],
                    comm_budget_L0=params["comm_budget_L0"], gamma=params["gamma"],
                    bound_form=params["bound_form"], sweep=params["sweep"], store=store)
