"""The worked example ``notebooks/hasfl/hasfl_your_method.ipynb``: a benchmark strategy of your own beside HASFL and
the paper's benchmarks, on one problem (41).

A strategy of your own is a function ``fn(problem, rng)`` of a :class:`fedlib.hasfl.Problem` and a seeded numpy
Generator that returns a :class:`fedlib.hasfl.Decision` or ``(b, cuts)``, named by import path
``"package.module:fn"`` (:func:`fedlib.hasfl.optimiser.strategies.own_strategy`). The notebook builds the problem,
compares the predicted Θ (eq. 42) of HASFL, the four benchmarks and yours, and trains three decisions as Fig. 5
runs are trained (:func:`fedlib.lab.hasfl.runs.train_plan.train_decision`) in its own cells; this module holds the
check of your strategy, its source as the notebook shows it, and the closing sentences. A strategy of your own
decides no claim of the paper: :func:`what_it_shows` states its numbers and no verdict.
"""
from __future__ import annotations

import inspect
from typing import Mapping

from fedlib.core.components import resolve
from fedlib.hasfl.optimiser.strategies import PAPER_STRATEGIES, STRATEGIES
from fedlib.lab.own_components import check_own
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


def source(strategy: str):
    """The source of the function ``strategy`` names, as a markdown code block (its module's text, as written)."""
    return markdown(f"```python\n{inspect.getsource(resolve(strategy, 'strategy', STRATEGIES)).rstrip()}\n```")


def _ratio(a, b):
    return a / b if a is not None and b else None


def summary(predicted_rows: list[dict], trained_rows: list[dict], strategy: str, benchmark: str) -> dict:
    """The numbers of the notebook's closing sentence, from its predicted rows (``method``, ``theta_ratio``,
    ``theta``) and its trained runs' rows (:func:`fedlib.lab.hasfl.runs.train_plan.decision_row`):
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
