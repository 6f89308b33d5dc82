"""The worked example ``notebooks/hasfl/hasfl_your_method.ipynb``: a benchmark strategy of your own beside HASFL and
the paper's benchmarks, on one problem (41).

A strategy of your own is a function ``fn(problem, rng)`` of a :class:`fedlib.hasfl.Problem` and a seeded numpy
Generator that returns a :class:`fedlib.hasfl.Decision` or ``(b, cuts)``, named by import path
``"package.module:fn"`` (:func:`fedlib.hasfl.optimiser.strategies.own_strategy`). Here it gets (a) its predicted Θ
(eq. 42) beside HASFL's and the four benchmarks' (:func:`predicted`), and (b) its decision trained as a Fig. 5 run
is trained, beside HASFL's and one benchmark's (:func:`trained`, through
:func:`fedlib.lab.hasfl.runs.train_plan.train_decision`). Nothing here decides, trains or scores on its own: the
pilot, the problem, the decisions, the runs and the clock are the training plan's, so HASFL's and the benchmark's
runs are those of ``hasfl_4_train_experiments`` at the same settings (cache hits where it ran). A strategy of your
own decides no claim of the paper: :func:`what_it_shows` states its numbers and no verdict.
"""
from __future__ import annotations

import inspect
from typing import Mapping

from fedlib.core.components import is_path, resolve
from fedlib.core.validate import check_choice, check_int, check_list
from fedlib.data import TensorDataset
from fedlib.hasfl.bound.problem import Problem
from fedlib.hasfl.optimiser.strategies import PAPER_STRATEGIES, STRATEGIES
from fedlib.lab.hasfl.runs.experiments import compare_strategies
from fedlib.lab.hasfl.runs.train_plan import train_decision
from fedlib.lab.own_components import check_own
from fedlib.lab.hasfl.runs.training import (TrainSettings, bound_constants, decide, pilot, target_eps,
                                            training_problem)
from fedlib.lab.store import ResultStore
from fedlib.lab.story import markdown

#: the paper's four benchmarks (Sec. VII-A), one of which is trained beside HASFL and yours
BENCHMARKS = PAPER_STRATEGIES[1:]


def check_strategy(strategy) -> str:
    """``strategy`` if it is an import path ``"package.module:fn"`` that imports now and names a function or class
    (:func:`fedlib.lab.own_components.check_own`); a built-in name is refused (the paper's strategies are compared
    anyway).

    Raises:
        ValueError / ParameterTypeError: naming ``strategy``, what it allows and why it failed."""
    check_own(strategy, "strategy", "my_strategy:compute_proportional", STRATEGIES,
              note=f"the paper's {list(STRATEGIES[:5])} are compared anyway")
    return strategy


def settings(p: Mapping, dataset: str) -> TrainSettings:
    """The :class:`TrainSettings` of the notebook's parameters ``p`` (its names are the fields'; ``dataset`` already
    resolved): the training, the pilot and ε as ``hasfl_4_train_experiments`` sets them for its first model.

    Raises:
        KeyError: a parameter missing from ``p``. ValueError / ParameterTypeError: as :class:`TrainSettings`."""
    return TrainSettings(model=p["model"], width=p["width"], dataset=dataset, interval=p["interval"],
                         optimizer=p["optimizer"], lr=p["lr"], epochs=p["epochs"], min_rounds=p["min_rounds"],
                         max_rounds=p["max_rounds"], evals=p["evals"], test_subset=p["test_subset"],
                         gamma=p["gamma"], pilot_steps=p["pilot_steps"], pilot_lr=p["pilot_lr"],
                         pilot_batch=p["pilot_batch"], num_batches=p["num_batches"], power_iters=p["power_iters"],
                         constants="pilot", eps_mode="slack", eps_factor=p["eps_factor"],
                         stop_at_convergence=p["stop_at_convergence"], extend_epochs=p["extend_epochs"])


def problem(store: ResultStore, s: TrainSettings, num_devices: int, seed: int, data: TensorDataset) -> Problem:
    """Problem (41) as the training plan builds it for a Fig. 5 run: the pilot constants of ``s`` at ``seed`` (the
    cached pilot, :func:`fedlib.lab.hasfl.runs.training.pilot`), ε by ``s.eps_factor`` and ``num_devices`` devices
    of Table I drawn from the ``system`` stream of ``seed`` (:func:`fedlib.lab.hasfl.runs.training.training_problem`)."""
    record = pilot(store, s, seed, data)
    constants = bound_constants(record, "pilot")
    return training_problem(s, constants, target_eps(record, constants, s, num_devices), num_devices, seed)


def source(strategy: str):
    """The source of the function ``strategy`` names, as a markdown code block (its module's text, as written)."""
    return markdown(f"```python\n{inspect.getsource(resolve(strategy, 'strategy', STRATEGIES)).rstrip()}\n```")


def predicted(problem: Problem, strategy: str, num_draws: int, seed: int) -> list[dict]:
    """Θ of HASFL, the four benchmarks and ``strategy`` on ``problem``
    (:func:`fedlib.lab.hasfl.runs.experiments.compare_strategies`: a random strategy, yours included, drawn
    ``num_draws`` times, its first draw the decision :func:`trained` trains).

    Returns:
        One row per method: ``method``, ``N``, ``theta`` (mean over the draws that reach ε, s; None when none
        does), ``theta_std``, ``unreachable`` (of its draws, those with ε unreachable: Θ = ∞; HASFL has one
        draw, the others ``num_draws``) and ``theta_ratio`` (Θ / HASFL's Θ; None where either is None).
    """
    check_strategy(strategy)
    rows = compare_strategies(problem, num_draws, seed, PAPER_STRATEGIES + (strategy,))
    hasfl = rows[0]["theta"]
    return [{"method": r["method"], "N": r["N"], "theta": r["theta"], "theta_std": r["theta_std"],
             "unreachable": r["infeasible"], "theta_ratio": r["theta"] / hasfl if r["theta"] and hasfl else None}
            for r in rows]


def plot_rows(rows: list[dict]) -> list[dict]:
    """:func:`predicted`'s rows in the names :func:`fedlib.lab.hasfl.figures.plots.fig_strategies` reads."""
    return [dict(r, infeasible=r["unreachable"]) for r in rows]


def trained(store: ResultStore, s: TrainSettings, setting: str, problem: Problem, seed: int, data: TensorDataset,
            target_acc: float, methods: list, device: str = "auto") -> list[dict]:
    """Each of ``methods`` (names of the paper's strategies or import paths) decided on ``problem`` at ``seed``
    (:func:`fedlib.lab.hasfl.runs.training.decide`) and trained on ``setting`` as a Fig. 5 run is
    (:func:`fedlib.lab.hasfl.runs.train_plan.train_decision`: a cache hit when that b and those cuts were trained
    before, whoever decided them).

    Returns:
        One :func:`train_decision` entry per method, in order: ``row`` (Fig. 5's summary row), ``decision``,
        ``curve``.

    Raises:
        ValueError: ``methods`` empty or repeated; as :func:`decide` and :func:`train_decision`."""
    methods = check_list("methods", methods, lambda k, v: v if is_path(v) else check_choice(k, v, STRATEGIES),
                         distinct=True)
    check_int("seed", seed, 0)
    return [train_decision(store, s, setting, decide(problem, m, seed), problem, seed, data, target_acc, device)
            for m in methods]


def _ratio(a, b):
    return a / b if a is not None and b else None


def summary(predicted_rows: list[dict], trained_rows: list[dict], strategy: str, benchmark: str) -> dict:
    """The numbers of the notebook's closing sentence, from :func:`predicted`'s and :func:`trained`'s rows:
    ``theta_ratio`` (your Θ / HASFL's; None when ε is unreachable at your decision), ``theta_best_benchmark``
    (the benchmark of lowest finite Θ, or None) and its ``theta_best_ratio``, ``time_to_target_ratio`` and
    ``benchmark_time_to_target_ratio`` (time to the target, yours / HASFL's and the benchmark's / HASFL's; None
    where a run did not reach it), ``final_acc_gain`` (your final accuracy minus HASFL's), the three runs'
    ``time_to_target_s`` and ``final_test_acc`` (yours; ``hasfl_`` and ``benchmark_`` before the name for the
    others) and ``target_acc``: flat keys, each a metric of its own.

    Raises:
        ValueError: a method missing from the rows."""
    pred = {r["method"]: r for r in predicted_rows}
    runs = {r["method"]: r for r in trained_rows}
    for name, where in ((strategy, pred), ("HASFL", pred), (strategy, runs), ("HASFL", runs), (benchmark, runs)):
        if name not in where:
            raise ValueError(f"summary: no row of {name!r} among {sorted(where)}")
    feasible = [r for r in predicted_rows if r["method"] in BENCHMARKS and r["theta"] is not None]
    best = min(feasible, key=lambda r: r["theta"]) if feasible else None
    hasfl, yours, bench = runs["HASFL"], runs[strategy], runs[benchmark]
    return {"method": strategy, "versus": benchmark, "theta_ratio": pred[strategy]["theta_ratio"],
            "theta_best_benchmark": best["method"] if best else None,
            "theta_best_ratio": best["theta_ratio"] if best else None,
            "time_to_target_ratio": _ratio(yours["time_to_target_s"], hasfl["time_to_target_s"]),
            "benchmark_time_to_target_ratio": _ratio(bench["time_to_target_s"], hasfl["time_to_target_s"]),
            "final_acc_gain": yours["final_test_acc"] - hasfl["final_test_acc"],
            "time_to_target_s": yours["time_to_target_s"], "hasfl_time_to_target_s": hasfl["time_to_target_s"],
            "benchmark_time_to_target_s": bench["time_to_target_s"], "final_test_acc": yours["final_test_acc"],
            "hasfl_final_test_acc": hasfl["final_test_acc"], "benchmark_final_test_acc": bench["final_test_acc"],
            "target_acc": hasfl["target_acc"]}


def _times(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}×"


def what_it_shows(s: Mapping):
    """:func:`summary` as the notebook's sentences (markdown): where your Θ falls, what training measured, and
    whether training ranks your strategy against HASFL as the prediction does. Every number is computed."""
    yours, bench, target = f"`{s['method']}`", s["versus"], s["target_acc"]
    ratio_p, ratio_t, best = s["theta_ratio"], s["time_to_target_ratio"], s["theta_best_benchmark"]
    if ratio_p is None:
        where = "Predicted: at your strategy's decision ε is unreachable (Θ = ∞): the bound says it never gets there."
    else:
        place = ("equal to HASFL's" if abs(ratio_p - 1) < 1e-9 else
                 "below HASFL's: Algorithm 2 missed a better decision on this problem" if ratio_p < 1 else
                 "between HASFL's and the best benchmark's" if best and ratio_p <= s["theta_best_ratio"] else
                 "above every benchmark that reaches ε" if best else
                 "above HASFL's, where no draw of any benchmark reaches ε")
        bench_text = f"; the best benchmark, {best}, predicts {_times(s['theta_best_ratio'])}" if best else ""
        where = f"Predicted: your strategy's Θ is {_times(ratio_p)} HASFL's, {place}{bench_text}."

    def reached(who, ratio=None):
        t, acc = s[f"{who}time_to_target_s"], s[f"{who}final_test_acc"]
        if t is None:
            return f"not reached within the run (final {100 * acc:.1f} %)"
        return f"{t:.3g} s" + (f", {_times(ratio)} HASFL's" if ratio is not None else "")
    trained = (f"Trained, simulated time to {100 * target:.0f} % test accuracy: HASFL {reached('hasfl_')}; {yours} "
               f"{reached('', ratio_t)}; {bench} {reached('benchmark_', s['benchmark_time_to_target_ratio'])}. "
               f"Your final accuracy is {100 * s['final_test_acc']:.1f} %, {100 * s['final_acc_gain']:+.1f} points "
               f"against HASFL's.")
    if ratio_p is None or ratio_t is None:
        agree = ("Training cannot rank the two on this reading: "
                 + ("your decision has no finite Θ." if ratio_p is None else "a run did not reach the target."))
    elif abs(ratio_p - 1) < 1e-9 and abs(ratio_t - 1) < 1e-9:
        agree = "Your strategy decided as HASFL did here, so its run is HASFL's."
    elif (ratio_p > 1) == (ratio_t > 1):
        agree = (f"Training ranks your strategy against HASFL as the prediction does "
                 f"({'slower' if ratio_t > 1 else 'faster'}): {_times(ratio_t)} HASFL's time where Θ said "
                 f"{_times(ratio_p)}.")
    else:
        agree = (f"Training reverses the prediction: Θ said {_times(ratio_p)} HASFL's, the run measures "
                 f"{_times(ratio_t)}.")
    return markdown(f"{where}\n\n{trained}\n\n{agree}\n\nThese are one seed's runs on one data setting: "
                    f"they judge no claim of the paper.")
