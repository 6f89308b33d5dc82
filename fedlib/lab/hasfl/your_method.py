"""The worked example ``notebooks/hasfl/hasfl_your_method.ipynb``: a benchmark strategy of your own beside HASFL and
the paper's benchmarks, on one problem (41).

A strategy of your own is a function ``fn(problem, rng)`` of a :class:`fedlib.hasfl.Problem` and a seeded numpy
Generator that returns a :class:`fedlib.hasfl.Decision` or ``(b, cuts)``, named by import path
``"package.module:fn"`` (:func:`fedlib.hasfl.optimiser.strategies.own_strategy`). The notebook builds the problem,
compares the predicted Θ (eq. 42) of HASFL, the four benchmarks and yours, and trains three decisions as Fig. 5
runs are trained (:func:`fedlib.lab.hasfl.runs.train_plan.train_decision`) in its own cells; this module holds the
check of your strategy, its source as the notebook shows it, and the closing sentences (from the numbers the
notebook computes in its cell). A strategy of your own decides no claim of the paper: :func:`what_it_shows` states
its numbers and no verdict.
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


def _times(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}×"


def what_it_shows(s: Mapping):
    """The notebook's closing numbers ``s`` as its sentences (markdown): where your Θ falls, what training measured,
    and whether training ranks your strategy against HASFL as the prediction does. ``s`` (the notebook's ``shows``,
    computed in its cell): ``method``, ``versus`` (the benchmark trained), ``theta_ratio`` (your Θ / HASFL's; None:
    ε unreachable), ``theta_best_benchmark`` / ``theta_best_ratio`` (the benchmark of lowest finite Θ, or None),
    ``time_to_target_ratio`` and ``benchmark_time_to_target_ratio`` (yours / HASFL's and the benchmark's / HASFL's,
    None where a run did not reach the target), ``final_acc_gain`` and the three runs' ``time_to_target_s`` (s) and
    ``final_test_acc`` (yours; ``hasfl_`` / ``benchmark_`` before the name for the others), ``target_acc``."""
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
