"""How far one parameter travels from a notebook's parameters cell into the method layer:
``python -m tests.tools.hops {dtfl,hasfl}`` (from the repository root; a developer's measurement, issue 68 item 2).

It runs one small run along the path the notebook takes, with the parameter at a value no other setting of the
run takes (DTFL's ``num_clients`` = 11: ``dtfl_4_training``'s own code cells, executed in order at the smoke profile
with one setting, one seed and 2 rounds, as papermill runs them: the notebook builds its ``DtflConfig``, the
schedule (:func:`fedlib.lab.dtfl.experiments.system_run`) and hands :func:`fedlib.dtfl.run.train_record` to the
store through :func:`fedlib.lab.parallel.get_or_run_all`; HASFL's ``num_devices`` = 11 through
``hasfl_4_train_experiments``'s path at the smoke profile, its design, clock and runs cells:
:class:`TrainSettings` / :class:`TrainPlan`, the reference run's problem, then
:func:`fedlib.lab.hasfl.runs.train_plan.decided_runs` -> the store -> :func:`fedlib.hasfl.training.train_run`,
for the plan's first run, Fig. 5's HASFL run), in a temporary store, figures and metrics folder that are removed
afterwards, and watches every call into ``fedlib`` (``sys.setprofile``; a notebook cell hands a value on as
``notebook.<name>``). A function *receives* the value when one of its arguments is it: an argument of the
parameter's name (or ``k``, ``K``, ``N``, ``num_devices``, ``num_clients``) equal to it, an object holding it as such
an attribute, or a tuple that holds it beside other values (a positional job), a dict or list of such (keyword
jobs). It reports the modules and functions that
received it, the hand-offs (distinct caller -> callee pairs where the callee receives it) and the checks of the
value itself (distinct call sites of a :mod:`fedlib.core.validate` check whose checked value it is, or of a
config's ``__post_init__`` that holds it; a check of another input's length against it is not counted).
"""
from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
from pathlib import Path

SENTINEL = 11
NAMES = ("num_clients", "num_devices", "k", "K", "N")
ROOT = Path(__file__).resolve().parents[2] / "fedlib"
HERE = str(Path(__file__).resolve())


def _holds(value) -> bool:
    """An object holding the value as a field of the parameter's name (a dataclass field or an instance
    attribute; not a property computed from other state)."""
    fields = getattr(type(value), "__dataclass_fields__", None) or getattr(value, "__dict__", None) or {}
    return any(n in fields and type(getattr(value, n, None)) is int and getattr(value, n) == SENTINEL
               for n in NAMES[:2])


def _carries(value, depth: int = 0) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return value == SENTINEL
    if isinstance(value, tuple) and 1 < len(value) <= 16:      # a positional job: the value beside others
        return any(type(v) is int and v == SENTINEL for v in value) and not all(type(v) is int for v in value)
    if isinstance(value, dict) and depth == 0 and len(value) <= 128:  # keyword jobs, a parameters namespace
        return any(_carries(v, 1) for v in value.values())
    if isinstance(value, (list, tuple)) and depth == 0 and 0 < len(value) <= 64:   # a list of jobs
        return any(_carries(v, 1) for v in value)
    return _holds(value)


def trace(run) -> dict:
    """Call ``run()`` under the profiler; returns ``{"modules", "functions", "hand_offs", "checks"}`` (counts) and
    the sorted lists behind them."""
    received, edges, checks = set(), set(), set()

    names: dict = {}

    def where(frame) -> str | None:
        code = frame.f_code
        if code not in names:                # the profiler sees every call: resolve each code object once
            try:
                rel = Path(code.co_filename).resolve().relative_to(ROOT)
                names[code] = f"{'.'.join(rel.with_suffix('').parts)}:{code.co_qualname}"
            except ValueError:               # a notebook's cell (run_cells) hands values on; anything else: not ours
                notebook = code.co_filename.endswith(".ipynb")
                names[code] = f"notebook.{Path(code.co_filename).stem}:{code.co_qualname}" if notebook else None
                if str(Path(code.co_filename).resolve()) == HERE:     # this tracer's harness: a caller, never a receiver
                    names[code] = f"lab.hops:{code.co_qualname}"
        return names[code]

    def profile(frame, event, arg):
        if event != "call":
            return
        here = where(frame)
        if here is None or here.startswith("lab.hops:"):      # not ours, or this tracer's own harness
            return
        code = frame.f_code
        args = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
        values = {a: frame.f_locals.get(a) for a in args}
        got = any((a in NAMES and type(v) is int and v == SENTINEL) or (a not in NAMES and _carries(v))
                  for a, v in values.items())
        if not got:
            return
        received.add(here)
        caller = where(frame.f_back) if frame.f_back is not None else None
        if caller is not None:
            edges.add((caller, here))
            value = values.get("value")
            if (here.startswith("core.validate:check_") and type(value) is int and value == SENTINEL) \
                    or here.endswith(".__post_init__"):
                checks.add((caller, here))

    old = sys.getprofile()
    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(old)
    received_outside_checks = {f for f in received if not f.startswith("core.validate:")}
    modules = sorted({f.split(":")[0] for f in received_outside_checks})
    return {"modules": len(modules), "functions": len(received_outside_checks), "hand_offs": len(edges),
            "checks": len(checks), "module_list": modules, "function_list": sorted(received_outside_checks),
            "hand_off_list": [f"{a} -> {b}" for a, b in sorted(edges)],
            "check_list": [f"{a} -> {b}" for a, b in sorted(checks)]}


def _parameters(paper: str, notebook: str, name: str) -> dict:
    """The notebook's parameters at the smoke profile, with ``name`` (and its lists) at the sentinel."""
    from fedlib.lab.notebooks import notebook_parameters
    from fedlib.lab.params import declared_parameters

    nb = ROOT.parent / "notebooks" / paper / f"{notebook}.ipynb"
    params = dict(declared_parameters(nb), **notebook_parameters(nb, "smoke"))
    params[name] = SENTINEL
    if paper == "hasfl":                     # Fig. 5's runs on IID data under the pilot constants: no calibration
        params.update(device_counts=[SENTINEL], settings=["iid"], constants="pilot")
    return params


def run_cells(path: Path, params: dict) -> None:
    """Execute the notebook ``path``'s code cells in order in a fresh namespace, with ``params`` injected after its
    parameters cell as papermill injects them (``In`` holds the cells run so far, which
    :func:`fedlib.lab.notebooks.setup_notebook` reads to tell typed values from the profile's); each cell is
    compiled under the notebook's file name (:func:`trace` names its calls ``notebook.<name>``)."""
    from papermill.translators import translate_parameters

    history = [""]
    namespace = {"__name__": "__main__", "In": history}
    for cell in json.loads(path.read_text())["cells"]:
        if cell["cell_type"] != "code":
            continue
        sources = ["".join(cell["source"])]
        if "parameters" in cell["metadata"].get("tags", []):
            sources.append(translate_parameters("python3", "python", params, "Parameters"))
        for source in sources:
            history.append(source)
            exec(compile(source, str(path), "exec"), namespace)


def _dtfl(store_dir: str):
    nb = ROOT.parent / "notebooks" / "dtfl" / "dtfl_4_training.ipynb"
    params = {"profile": "smoke", "num_clients": SENTINEL, "seeds": [0], "settings": ["iid"], "rounds": 2,
              "workers": 1, "device": "cpu"}
    folders = {"FEDLIB_CACHE_DIR": "store", "FEDLIB_FIGURES_DIR": "figures", "FEDLIB_METRICS_DIR": "metrics"}

    def run():                               # dtfl_4_training's cells, one seed and setting, 2 rounds
        before = {k: os.environ.get(k) for k in folders}
        os.environ.update({k: str(Path(store_dir) / v) for k, v in folders.items()})
        try:
            with contextlib.redirect_stdout(sys.stderr):     # the notebook's printing; the report is stdout's
                run_cells(nb, params)
        finally:
            for k, v in before.items():
                if v is None:
                    del os.environ[k]
                else:
                    os.environ[k] = v
    return run


def _hasfl(store_dir: str):
    from functools import partial

    from fedlib.core import numpy_rng
    from fedlib.data import DATASET_SHAPES, load_dataset
    from fedlib.hasfl.bound.latency import round_latency, table_i
    from fedlib.hasfl.bound.problem import Problem, theta
    from fedlib.hasfl.training import train_run
    from fedlib.split import model_profile, sample_system
    from fedlib.lab.hasfl import checks as hasfl_checks
    from fedlib.lab.hasfl.runs import experiments as hasfl_experiments
    from fedlib.lab.hasfl.runs.train_config import needs_extension, with_clock
    from fedlib.lab.hasfl.runs.train_plan import TrainPlan, decided_runs, decision_row
    from fedlib.lab.hasfl.runs.train_run import get_or_run
    from fedlib.lab.hasfl.runs.training import TrainSettings, bound_constants, pilot, target_eps

    p = _parameters("hasfl", "hasfl_4_train_experiments", "num_devices")
    store = hasfl_experiments.result_store(store_dir)
    data = load_dataset("fashion-mnist")

    def run():                               # hasfl_4_train_experiments' cells, Fig. 5's runs at the first seed
        hasfl_checks.check_hasfl_4_train_experiments(p)
        # the design cell
        s = TrainSettings(model=p["models"][0], width=p["widths"][0], dataset="fashion-mnist",
                          interval=p["interval"], optimizer=p["optimizer"], lr=p["lr"], epochs=p["epochs"],
                          min_rounds=p["min_rounds"], max_rounds=p["max_rounds"], evals=p["evals"],
                          test_subset=p["test_subset"], gamma=p["gamma"], pilot_steps=p["pilot_steps"],
                          pilot_lr=p["pilot_lr"], pilot_batch=p["pilot_batch"], num_batches=p["num_batches"],
                          power_iters=p["power_iters"], constants=p["constants"], eps_mode=p["eps_mode"],
                          eps_factor=p["eps_factor"], stop_at_convergence=p["stop_at_convergence"],
                          extend_epochs=p["extend_epochs"])
        plan = TrainPlan(settings=tuple(p["settings"]), num_devices=p["num_devices"],
                         batch_grid=tuple(p["batch_grid"]), fixed_cut=p["fixed_cut"], cut_grid=tuple(p["cut_grid"]),
                         fixed_batch=p["fixed_batch"], models=tuple(p["models"]), widths=tuple(p["widths"]),
                         device_counts=tuple(p["device_counts"]), n_methods=tuple(p["n_methods"]),
                         fig9_settings=tuple(p["fig9_settings"]), fig9_draws=p["fig9_draws"],
                         sweep_factors=tuple(p["sweep_factors"]) if p["sweep"] else (),
                         sweep_methods=tuple(p["sweep_methods"]), calibrate_variance=p["calibrate_variance"],
                         model_cut_grids=(tuple(tuple(g) for g in p["model_cut_grids"])
                                          if p["calibrate_later_models"] else ()))
        # the clock cell: the reference run on the first seed's system
        n, seed = p["num_devices"], p["seeds"][0]
        rec = pilot(store, s, seed, data)
        constants = bound_constants(rec, "pilot")
        devices, servers = sample_system(table_i(n), numpy_rng(seed, "system"))
        problem = Problem(model_profile(s.model, *DATASET_SHAPES[s.dataset], width=s.width), devices, servers,
                          constants, s.gamma, target_eps(rec, constants, s, n), s.interval)
        b, cuts = [p["fixed_batch"]] * n, [p["fixed_cut"]] * n
        round_latency(problem.profile, b, cuts, devices, servers)
        theta(problem, b, cuts)
        # the runs cell: its first run (Fig. 5's HASFL run; the plan's other runs take the same path)
        for r in decided_runs(store, s, plan, [seed], p["target_acc"], data, "cpu", only_figures=("fig5",)):
            record = get_or_run(store, r["config"], partial(train_run, r["config"], data, "cpu", "loop"), "loop")
            if r["extend"] is not None and needs_extension(record, 1 / data.num_classes):
                record = get_or_run(store, r["extend"], partial(train_run, r["extend"], data, "cpu", "loop"), "loop")
            record = with_clock(dict(record, extended_from_epochs=None), r["problem"])
            decision_row(record, r["problem"], r["decision"], p["target_acc"], r["figs"], r["method"], r["sm"],
                         r["setting"], r["batch"], r["cut"], r["draw"], r["ss"].constants, r["scale"], r["fit"])
            break                            # one run: under the profiler a run trains many times slower
    return run


PATHS = {"dtfl": ("num_clients", _dtfl), "hasfl": ("num_devices", _hasfl)}


def main(argv=None) -> int:
    from fedlib.lab.cli import ArgumentParser

    parser = ArgumentParser(prog="python -m tests.tools.hops", description=(
        "How far a notebook parameter travels into fedlib: one small run of the notebook's path with the parameter "
        "at 11, in a temporary store (removed afterwards); prints the modules, functions, hand-offs and checks that "
        "receive it, as JSON."))
    parser.add_argument("paper", choices=sorted(PATHS), help="dtfl: num_clients (dtfl_4_training's cells at smoke); hasfl: "
                        "num_devices (hasfl_4_train_experiments' path at the smoke profile, Fig. 5's runs)")
    parser.add_argument("--list", action="store_true", help="also list the modules, functions, hand-offs and checks")
    args = parser.parse_args(argv)
    name, driver = PATHS[args.paper]
    with tempfile.TemporaryDirectory(prefix="fedlib-hops-") as tmp:
        out = trace(driver(tmp))
    summary = {"paper": args.paper, "parameter": name, **{k: v for k, v in out.items() if not k.endswith("_list")}}
    print(json.dumps({**summary, **({k: v for k, v in out.items() if k.endswith("_list")} if args.list else {})},
                     indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
