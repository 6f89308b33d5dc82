"""A live "what-if" explorer of DTFL's tier scheduler and round time (``notebooks/dtfl/dtfl_explore.ipynb``).

Source: DTFL (Sajjadi Mohammadabadi et al., IEEE IoT Journal 2024, https://arxiv.org/abs/2312.05642): the time model
of Sec. 3.3, eq. 5 (T_k(m) = max{T_c + T_com, T_s + T_com}), the scheduler's rule of eq. 6 / Algorithm 1 (T_max =
max_k min_m T_k(m); each client the largest tier whose time is <= T_max), Sec. 4.1's profiles and Table 1's cases.
No time is computed here: every number comes from :mod:`fedlib.dtfl.timing`, :mod:`fedlib.lab.dtfl.timeline` and
:mod:`fedlib.dtfl.baseline_time` (FedAvg), built as ``dtfl_2_table1`` builds them
(:func:`fedlib.lab.dtfl.experiments.time_model`, :func:`fedlib.lab.dtfl.compare.costs_of`); only the clients' draw, the DTFL
/ FedAvg ratio and a sweep's grid are this module's.

Units: seconds (s); FLOPs (fwd + bwd, multiply-add = 2) and tensor bytes inside the time model; links in Mbit/s
(10^6 bit/s); speeds in GFLOP/s (per client CPU, per client copy on the server). Shapes: ``[K]`` per client, ``[M]``
per tier, ``[M][K]`` per tier and client. Clients: typed (:func:`fedlib.lab.dtfl.checks.clients_from_text`), or drawn with ``seed``
(:func:`draw_clients`: log-uniform in the ranges, 3 significant digits, client i's pair the same at any K; or the
paper's profiles :data:`fedlib.dtfl.CASES` as the notebooks' round 1 spreads them), ``samples_per_client`` each.

Also here, for the notebook's Verdict and the generated text: the claim ``dtfl_explore`` judges at the controls'
state (:data:`CLAIMS`), and the explorer the notebook builds at its defaults (:func:`default_explorer`).

DTFL (arXiv:2312.05642), abstract and Sec. 4.2: DTFL *"can significantly reduce the training time"* against FedAvg
and the other baselines. The explorer times one round on the library's time model (Sec. 3.3, eq. 5) for the
clients it draws or is given: the scheduler's tiers (eq. 6) against FedAvg, which trains the whole model on every
client. The verdict judges that round, as a prediction of the time model (nothing is trained): FedAvg's round over
DTFL's must exceed 1 (the paper gives no number for one round, so there is no partly band). The trained time to
target is judged in ``dtfl_5_baselines`` (Table 3).
"""
from __future__ import annotations

import copy
import dataclasses
import functools
import json
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import torch
from torch import nn

from fedlib.lab import story
from fedlib.lab.explore import Action, Control, Explorer
from fedlib.core.seeding import numpy_rng
from fedlib.core.validate import check_choice, check_float, check_int, check_str
from fedlib.data import DATASET_SHAPES
from fedlib.lab.split.timeline import EXPLORER_PANEL_IN, timeline_figure
from fedlib.lab.dtfl import experiments as dx
from fedlib.lab.units import check_plausible
from fedlib.dtfl.baseline_time import method_costs, method_times
from fedlib.lab.dtfl.checks import (FIELDS, MAX_CLIENTS, SOURCES, UNITS, check_dtfl_explore, check_range,
                                    clients_from_text)
from fedlib.lab.dtfl.compare import costs_of
from fedlib.dtfl.scheduler import profile_schedule
from fedlib.dtfl.tiers import check_num_tiers, tier_table
from fedlib.lab.dtfl.timeline import method_timeline, scheduled_tiers, tier_timeline
from fedlib.dtfl.timing import CASES, TimeModel, check_resources, tier_costs
from fedlib.dtfl.training import MODELS
from fedlib.lab.verdicts import AtLeast, Claim

PAPER = "DTFL, arXiv:2312.05642 (https://arxiv.org/abs/2312.05642)"
OWN = "your model"
CPU_BOUNDS, MBPS_BOUNDS = (0.05, 8.0), (1.0, 500.0)


def draw_clients(clients_from: str, num_clients: int, cpus_range, mbps_range, seed: int) -> tuple[list, list]:
    """The drawn clients' ``(cpus [K], mbps [K])``: ``ranges`` log-uniform in the two ranges; ``all`` / ``case1`` /
    ``case2``: the profiles as :func:`fedlib.dtfl.profile_schedule` spreads them in round 1 (``system`` stream)."""
    check_choice("clients_from", clients_from, SOURCES)
    k, seed = check_int("num_clients", num_clients, 1), check_int("seed", seed, 0)
    if clients_from != "ranges":
        profiles = CASES[clients_from]
        idx = profile_schedule(k, 1, len(profiles), 0, 0.0, numpy_rng(seed, "system"))[0]
        return [profiles[i].cpus for i in idx], [profiles[i].mbps for i in idx]
    lo, hi = np.log([check_range("cpus_range", cpus_range), check_range("mbps_range", mbps_range)]).T
    draws = np.exp(numpy_rng(seed, "system/explore").uniform(lo, hi, (k, 2)))   # client i's pair: same at any K
    return tuple([float(f"{v:.3g}") for v in col] for col in draws.T)


def check_model(net, input_shape, num_classes: int) -> nn.Sequential:
    """``net`` if DTFL's cost model takes it: an ``nn.Sequential`` of the 8 units md1..md8 (:mod:`fedlib.dtfl.tiers`)
    whose md1..md7 each output ``[B, C, H, W]`` (the auxiliary head pools them) and md8 ``[B, num_classes]`` for
    inputs ``[B, *input_shape]`` (C, H, W). Raises ``ValueError`` / ``ParameterTypeError`` naming the unit."""
    if not isinstance(net, nn.Sequential) or len(net) != 8:
        units = f" of {len(net)} units" if isinstance(net, nn.Sequential) else ""
        raise ValueError("model must be an nn.Sequential of the 8 units md1..md8 (DTFL's tiers cut after md1..md7), "
                         f"got {type(net).__name__}{units}")
    shape = tuple(check_int(f"input_shape[{i}]", v, 1) for i, v in enumerate(input_shape))
    with torch.no_grad():
        h = torch.zeros(2, *shape)
        for i, unit in enumerate(copy.deepcopy(net).eval(), 1):
            try:
                h = unit(h)
            except RuntimeError as exc:
                raise ValueError(f"model: md{i} does not take " + ("input_shape " + str(shape) if i == 1 else
                                 f"md{i - 1}'s output") + f": {exc}") from None
            if i < 8 and h.dim() != 4:
                raise ValueError(f"model: md{i} outputs {tuple(h.shape[1:])} per sample; DTFL's auxiliary head needs "
                                 "(C, H, W) after each of md1..md7")
    if tuple(h.shape[1:]) != (num_classes,):
        raise ValueError(f"model: md8 outputs {tuple(h.shape[1:])} per sample, expected ({num_classes},) (num_classes)")
    return net


def _models(model, width, dataset, m, core, server, net, input_shape, num_classes, cache):
    """(TimeModel, FedAvg's MethodCosts) as dtfl_2_table1 builds them; the own model's costs cached in ``cache``."""
    if model == OWN:
        if net is None:
            raise ValueError(f"model {OWN!r} needs net: an nn.Sequential of the 8 units md1..md8")
        if "fedavg" not in (cache := {} if cache is None else cache):
            cache["fedavg"] = method_costs("fedavg", check_model(net, input_shape, num_classes), tuple(input_shape),
                                           num_classes)
        if m not in cache:
            cache[m] = tier_costs(net, tuple(input_shape), m, num_classes)
        return TimeModel(cache[m], core * 1e9, server * 1e9), cache["fedavg"]
    check_choice("model", model, MODELS)
    check_float("width", width, 0, low_open=True)
    base = dx.time_model(model, width, dataset, m, 1.0, 1.0)       # cached per model; the speeds are set below
    return (dataclasses.replace(base, core_flops=core * 1e9, server_flops=server * 1e9),
            costs_of("fedavg", model, width, dataset))


def compute(*, model: str = "resnet20", width: float = 0.5, dataset: str = "fashion-mnist", num_clients: int = 10,
            num_tiers: int = 7, samples_per_client: int = 100, clients_from: str = "ranges", cpus_range=(0.1, 4.0),
            mbps_range=(10.0, 100.0), seed: int = 0, clients: str = "", core_gflops: float = 3.0,
            server_gflops: float = 5.0, net: nn.Sequential | None = None, input_shape=None, num_classes=None,
            cache: dict | None = None) -> dict:
    """One DTFL round and one FedAvg round on the clients (module docstring).

    Args:
        model: a DTFL model name at ``width`` on ``dataset``'s input shape, or ``"your model"``: ``net``
            (:func:`check_model`) on ``input_shape`` (C, H, W) with ``num_classes``; ``cache``: a dict kept between
            calls for its profiled costs. num_tiers: M, 1..7. clients: typed (:func:`fedlib.lab.dtfl.checks.clients_from_text`; empty:
            :func:`draw_clients`). core_gflops / server_gflops: client CPU / server per client copy (> 0).

    Returns lists ``cpus``, ``mbps``, ``samples``, ``tiers`` (the scheduler's, eq. 6), ``client_modules``, ``T_c``,
    ``T_s``, ``T_com``, ``T`` (eq. 5 at those tiers, s), ``fedavg_T`` ``[K]`` (s),
    ``round_s_by_tier`` ``[M]`` (every client in tier m, Table 1's setting, s); ``dtfl_round_s``, ``fedavg_round_s``
    (max_k T_k, s), ``ratio`` (DTFL / FedAvg), ``best_tier``, ``settings``; the objects ``dtfl_timeline``,
    ``fedavg_timeline`` (:class:`fedlib.lab.split.timeline.Timeline`), ``time_model``, ``fedavg_costs``. Raises
    ``ValueError`` / ``ParameterTypeError`` naming a bad input (a typed row: its row and field).
    """
    m = check_num_tiers(num_tiers)
    check_int("num_clients", num_clients, 1, MAX_CLIENTS)
    if model != OWN:
        check_float("width", width, 0, 1, low_open=True)
    core = check_plausible("core_gflops", core_gflops, *UNITS["core_gflops"])
    server = check_plausible("server_gflops", server_gflops, *UNITS["server_gflops"])
    check_choice("dataset", dataset, tuple(DATASET_SHAPES))
    ch, size, classes = DATASET_SHAPES[dataset]
    input_shape, num_classes = input_shape or (ch, size, size), num_classes or classes
    if check_str("clients", clients, nonempty=False).strip():
        cpus, mbps, samples = clients_from_text(clients)
        source = f"typed, {len(cpus)} clients"
    else:
        cpus, mbps = draw_clients(clients_from, num_clients, cpus_range, mbps_range, seed)
        samples, source = None, f"drawn: {clients_from}, seed {seed}"
    if not samples:
        check_plausible("samples_per_client", check_int("samples_per_client", samples_per_client, 1),
                        *UNITS["samples_per_client"])
    k, samples = len(cpus), samples or [samples_per_client] * len(cpus)
    cpus, mbps, n = check_resources(cpus, mbps, samples)
    tm, fed = _models(model, width, dataset, m, core, server, net, input_shape, num_classes, cache)
    tiers = scheduled_tiers(tm, cpus, mbps, n)
    dtfl_tl = tier_timeline(tm, tiers, cpus, mbps, n)
    fed_tl = method_timeline(fed, cpus, mbps, n, tm.core_flops, tm.server_flops)
    per_tier = [tier_timeline(tm, np.full(k, j), cpus, mbps, n).model_latency for j in range(1, m + 1)]
    per = {key: v.tolist() for key, v in tm.times(tiers, cpus, mbps, n).items()}     # T_c, T_s, T_com, T
    fed_t = method_times(fed, cpus, mbps, n, tm.core_flops, tm.server_flops)["T"]
    return dict(per, cpus=cpus.tolist(), mbps=mbps.tolist(), samples=[int(v) for v in samples], tiers=tiers.tolist(),
                client_modules=tm.costs.cuts[tiers - 1].tolist(), fedavg_T=fed_t.tolist(),
                round_s_by_tier=per_tier, best_tier=int(np.argmin(per_tier)) + 1,
                dtfl_round_s=dtfl_tl.model_latency, fedavg_round_s=fed_tl.model_latency,
                ratio=dtfl_tl.model_latency / fed_tl.model_latency, dtfl_timeline=dtfl_tl, fedavg_timeline=fed_tl,
                time_model=tm, fedavg_costs=fed,
                settings=dict(model=model, width=None if model == OWN else width, dataset=dataset,
                              input_shape=list(input_shape), num_classes=num_classes, num_tiers=m, core_gflops=core,
                              server_gflops=server, clients=source))


def table_view(result: dict):
    """The summary and each client's tier and times (s), then the round time with every client in one tier."""
    r, s, tiers = result, result["settings"], tier_table(result["settings"]["num_tiers"])
    keys = ("cpus", "mbps", "samples", "tiers", "T_c", "T_s", "T_com", "T", "fedavg_T")
    rows = [dict(zip(keys, v), client=i, side=tiers[v[3] - 1]["client"]) for i, v in enumerate(zip(*map(r.get, keys)))]
    cols = ["client", "cpus", "mbps", "samples", "tiers", "side", "T_c", "T_s", "T_com", "T", "fedavg_T"]
    heads = dict(cpus="CPUs", mbps="Mbit/s", tiers="tier", side="client side", T_c="T_c (s)", T_s="T_s (s)",
                 T_com="T_com (s)", T="T, eq. 5 (s)", fedavg_T="FedAvg T (s)")
    per_tier = [dict(row, round=r["round_s_by_tier"][m - 1], best="best" * (m == r["best_tier"]))
                for m, row in enumerate(tiers, 1)]
    head = (f"**DTFL round {r['dtfl_round_s']:.4g} s** (max_k T_k, eq. 5, the scheduler's tiers) against **FedAvg "
            f"{r['fedavg_round_s']:.4g} s**: FedAvg / DTFL = **{r['fedavg_round_s'] / r['dtfl_round_s']:.3g}×** "
            f"(the Verdict's ratio). {s['model']}, width {s['width']}, "
            f"input {tuple(s['input_shape'])}, M = {s['num_tiers']}, clients {s['clients']}; client "
            f"{s['core_gflops']:g} GFLOP/s per CPU, server {s['server_gflops']:g} GFLOP/s per client copy.")
    fmt = {c: ".4g" for c in ("T_c", "T_s", "T_com", "T", "fedavg_T", "round")}
    return story.markdown("\n\n".join([head, story.table(rows, cols, fmt, heads).data,
        "Every client in one tier (Table 1's setting; no scheduler):",
        story.table(per_tier, ["tier", "client", "server", "round", "best"], fmt,
                    dict(client="client side", server="server side", round="round, max_k T_k (s)", best="")).data]))


def timeline_view(result: dict):
    """The DTFL and FedAvg rounds side by side (:func:`fedlib.lab.split.timeline.timeline_figure`)."""
    return timeline_figure([result["dtfl_timeline"], result["fedavg_timeline"]],
                           [f"DTFL, the scheduler's tiers (M = {result['settings']['num_tiers']})", "FedAvg"],
                           panel_width=EXPLORER_PANEL_IN)


def sweep_client(values: dict, points: int = 24, progress=None, **fixed) -> dict:
    """Client 0's tier and both round times (s) as its CPUs, then its link (Mbit/s), sweep a log grid of ``points``
    over :data:`CPU_BOUNDS` / :data:`MBPS_BOUNDS` (the others fixed): ``{"cpus": rows, "mbps": rows, "client0",
    "num_tiers"}``, rows ``{"value", "tier", "dtfl_round_s", "fedavg_round_s"}``. Raises as :func:`compute`."""
    points, r = check_int("points", points, 2), compute(**values, **fixed)
    tm, fed = r["time_model"], r["fedavg_costs"]
    out = {"client0": {f: r[f][0] for f in FIELDS}, "num_tiers": r["settings"]["num_tiers"]}
    for j, (field, bounds) in enumerate((("cpus", CPU_BOUNDS), ("mbps", MBPS_BOUNDS))):
        out[field] = []
        for i, v in enumerate(np.geomspace(*bounds, points)):
            c = [np.array([v] + r[f][1:] if f == field else r[f], float) for f in FIELDS]
            tiers = scheduled_tiers(tm, *c)
            dtfl, fedavg = tier_timeline(tm, tiers, *c), method_timeline(fed, *c, tm.core_flops, tm.server_flops)
            out[field].append(dict(value=float(v), tier=int(tiers[0]), dtfl_round_s=dtfl.model_latency,
                                   fedavg_round_s=fedavg.model_latency))
            if progress is not None:
                progress(j * points + i + 1, 2 * points)
    return out


def sweep_figure(sweep: dict):
    """Two columns (client 0's CPUs, its Mbit/s): its tier above, the DTFL and FedAvg round times (s) below."""
    from matplotlib.ticker import FormatStrFormatter, LogLocator, NullFormatter
    from fedlib.lab.plotting import new_figure
    fig, axes = new_figure(ncols=2, nrows=2, width=4.2, height=2.4)
    for col, (field, label) in enumerate((("cpus", "client 0's CPUs"), ("mbps", "client 0's link (Mbit/s)"))):
        x, m, (top, low) = [row["value"] for row in sweep[field]], sweep["num_tiers"], axes[:, col]
        top.step(x, [row["tier"] for row in sweep[field]], where="mid", color="C0")
        top.set(ylabel="client 0's tier", yticks=range(1, m + 1), ylim=(0.5, m + 0.5), xscale="log")
        for key, name, colour in (("dtfl_round_s", "DTFL", "C0"), ("fedavg_round_s", "FedAvg", "C3")):
            low.plot(x, [row[key] for row in sweep[field]], color=colour, label=name)
        low.set(ylabel="round time (s)", xlabel=label, xscale="log", yscale="log")
        for ax in (top, low):   # plain tick numbers (x: decades only; y: 1, 2, 5 per decade)
            ax.axvline(sweep["client0"][field], color="0.5", ls=":")
            ax.xaxis.set(major_formatter=FormatStrFormatter("%g"), minor_formatter=NullFormatter())
        low.yaxis.set(major_formatter=FormatStrFormatter("%g"), minor_formatter=FormatStrFormatter("%g"),
                      minor_locator=LogLocator(subs=(2.0, 5.0)))
    axes[1, 0].legend(fontsize=8, loc="upper right")
    fig.suptitle("Where client 0's tier changes (dotted: its value now)", fontsize=10)
    return fig


def explorer(model="resnet20", width: float = 0.5, dataset: str = "fashion-mnist", num_clients: int = 10,
             num_tiers: int = 7, samples_per_client: int = 100, clients_from: str = "ranges", cpus_range=(0.1, 4.0),
             mbps_range=(10.0, 100.0), seed: int = 0, clients_text: str = "", clients_csv: str = "",
             core_gflops: float = 3.0, server_gflops: float = 5.0, input_shape=None, num_classes=None) -> Explorer:
    """The explorer (:class:`fedlib.lab.explore.Explorer`) at these defaults: controls for every :func:`compute`
    input, the views :func:`table_view` and :func:`timeline_view`, the sweep of :func:`sweep_client`, exported by
    :func:`export_json`.

    Args: ``model``: a DTFL model name, or your own ``nn.Sequential`` (:func:`check_model`; ``input_shape`` /
    ``num_classes`` default to ``dataset``'s, whose shape only is used: no data is loaded). ``clients_text`` /
    ``clients_csv``: typed clients (the CSV file is read into the text control). Others: :func:`compute`. Raises
    ``ValueError`` / ``ParameterTypeError``: a bad default (:func:`check_dtfl_explore`), a model DTFL cannot split.
    """
    dataset = check_dtfl_explore(dict(locals()))
    ch, size, classes = DATASET_SHAPES[dataset]
    net, fixed, names = None, dict(dataset=dataset, cache={}), MODELS
    if isinstance(model, nn.Module):
        net, shape, k = model, tuple(input_shape or (ch, size, size)), num_classes or classes
        fixed.update(net=check_model(net, shape, k), input_shape=shape, num_classes=k)
        model, names = OWN, (OWN, *MODELS)
    _models(model, width, dataset, num_tiers, core_gflops, server_gflops, net, fixed.get("input_shape"),
            fixed.get("num_classes"), fixed["cache"])          # the model profiled now: a failure raises here
    if clients_csv.strip():
        clients_text = Path(clients_csv).read_text(encoding="utf-8-sig")
    (lo_c, hi_c), (lo_m, hi_m) = check_range("cpus_range", cpus_range), check_range("mbps_range", mbps_range)
    controls = [
        Control("clients_from", "clients drawn from", "choice", clients_from, options=SOURCES),
        Control("cpus_range", "CPUs per client", "range", (lo_c, hi_c), min(lo_c, CPU_BOUNDS[0]),
                max(hi_c, CPU_BOUNDS[1]), step=0.05),
        Control("mbps_range", "link speed (Mbit/s)", "range", (lo_m, hi_m), min(lo_m, MBPS_BOUNDS[0]),
                max(hi_m, MBPS_BOUNDS[1]), step=1.0),
        Control("num_clients", "clients K", "int", num_clients, 1, 100),
        Control("samples_per_client", "samples per client N_k", "int", samples_per_client, 1,
                max(2000, samples_per_client)),
        Control("seed", "draw seed", "int", seed, 0, max(100, seed)),
        Control("num_tiers", "tiers M", "int", num_tiers, 1, 7),
        Control("model", "model (profiled once: seconds)", "choice", model, options=names),
        Control("width", "width (channel multiplier)", "float", width, min(0.05, width), 1.0, step=0.05),
        Control("core_gflops", "client GFLOP/s per CPU", "float", core_gflops, min(0.1, core_gflops),
                max(300.0, core_gflops), log=True),
        Control("server_gflops", "server GFLOP/s per client", "float", server_gflops, min(0.1, server_gflops),
                max(3000.0, server_gflops), log=True),
        Control("clients", "your own clients", "text", clients_text,
                help="one line per client: cpus, mbps[, samples] (a header line allowed); empty: drawn"),
    ]
    run = functools.partial(compute, **fixed)
    sweep = Action("Sweep client 0's CPUs and link: where does its tier change?",
                   lambda values, progress: sweep_figure(sweep_client(values, progress=progress, **fixed)))
    return Explorer(controls, run, [table_view, timeline_view], [sweep], inactive=inactive_controls,
                    view_keys=[None, timeline_key], to_json=export_json)


def timeline_key(result: dict) -> tuple:
    """What :func:`timeline_view` draws from: the clients, their tiers, both rounds' times and M."""
    return (*(tuple(result[k]) for k in ("cpus", "mbps", "samples", "tiers", "T", "fedavg_T")),
            result["settings"]["num_tiers"], result["dtfl_round_s"], result["fedavg_round_s"])


def inactive_controls(values: Mapping[str, Any]) -> dict:
    """The controls that do not apply at ``values``: with clients typed, the draw (source, ranges, K, seed) and,
    when the rows give samples, N_k; with the paper's profiles, the two ranges."""
    text = str(values.get("clients", "")).strip()
    if text:
        off = dict.fromkeys(("clients_from", "cpus_range", "mbps_range", "num_clients", "seed"),
                            "your typed clients replace the draw")
        try:
            if clients_from_text(text)[2] is not None:
                off["samples_per_client"] = "your typed rows give each client's samples"
        except ValueError:
            pass                                             # the error line says why
        return off
    if values.get("clients_from", "ranges") != "ranges":
        return dict.fromkeys(("cpus_range", "mbps_range"), f"the paper's profiles ({values['clients_from']}) "
                             "set the clients' CPUs and links")
    return {}


def export_json(result: dict) -> str:
    """The decision (:func:`compute`'s result) as JSON text: settings, each client's inputs, tier and times (s),
    the round times (s)."""
    keys = ("cpus", "mbps", "samples", "tiers", "client_modules", "T_c", "T_s", "T_com", "T", "fedavg_T",
            "dtfl_round_s", "fedavg_round_s", "ratio", "round_s_by_tier", "best_tier", "settings")
    clients = [dict(client=i, **{key.rstrip("s") if key == "tiers" else key: result[key][i] for key in keys[:10]})
               for i in range(len(result["tiers"]))]
    doc = {"source": PAPER, **{key: result[key] for key in keys[10:15]}, "settings": result["settings"],
           "units": "s (times), Mbit/s (mbps), GFLOP/s (speeds)", "clients": clients}
    return json.dumps(doc, indent=1, allow_nan=False)


# --- the notebook's verdict: the claim judged at the controls' state, and the default explorer ----------

NOTEBOOK = "dtfl_explore"


def round_speedup(result: Mapping[str, Any]) -> dict:
    """``{"ours": [FedAvg's round / DTFL's round]}`` (×; each round the slowest client's T = max_k T_k of eq. 5,
    s). Raises ``KeyError`` when ``result`` lacks the round times (then no verdict)."""
    return {"ours": [result["fedavg_round_s"] / result["dtfl_round_s"]]}


CLAIMS = [Claim("explore_round_faster", "DTFL's round is shorter than FedAvg's (time model, eq. 5)", "Sec. 4.2",
                "reduces training time", NOTEBOOK, AtLeast(target=1.0, unit="×"), round_speedup,
                why="'DTFL can significantly reduce the training time' without a number for one round: faster "
                    "(FedAvg / DTFL above 1) holds, else fails.")]


def default_explorer(params: Mapping[str, Any]):
    """The explorer the notebook builds from its parameters ``params`` (its parameters cell's values)."""
    keys = ("model", "width", "dataset", "num_clients", "num_tiers", "samples_per_client", "clients_from",
            "cpus_range", "mbps_range", "seed", "clients_text", "clients_csv", "core_gflops", "server_gflops")
    return explorer(**{k: params[k] for k in keys})
