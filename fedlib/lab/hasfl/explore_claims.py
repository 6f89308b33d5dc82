"""The claim ``hasfl_explore`` judges, at the controls' state, and its default-state result for the generated text.

HASFL (Lin et al., arXiv:2506.08426), Sec. VII on Fig. 9: *"HASFL consistently outperforms the other benchmarks by
achieving significantly lower training latency across all configurations of N"*. HASFL decides each device's batch
size and cut layer by minimising Θ, the predicted time to reach ε (eq. 42), with Algorithm 2; the explorer computes
Θ for HASFL's decision and for each draw of the four benchmarks (RBS+HAMS, HABS+RMS, RBS+RMS, RBS+RHAMS) at the
controls. The verdict judges that prediction (nothing is trained): the smallest benchmark Θ over HASFL's must be at
least 1 (Algorithm 2 is a block-coordinate descent, not an exact minimiser, so a benchmark may come out ahead).
A draw whose ε is unreachable never converges: it is left out of the minimum, and when every draw is, the ratio is
only known to be unbounded (a lower bound, "≥ 1.00×"). The trained converged times are
judged in ``hasfl_4_train_experiments`` and ``hasfl_5_train_figures``.
"""
from __future__ import annotations

from typing import Any, Mapping

from fedlib.lab.verdicts import AtLeast, Censored, Claim

NOTEBOOK = "hasfl_explore"


def slowest_ratio(result: Mapping[str, Any]) -> dict:
    """``{"ours": [min over benchmarks and draws of Θ_benchmark / Θ_HASFL]}`` (×; Θ in s, eq. 42). A draw whose ε
    is unreachable (Θ None: the bound never reaches ε at its b and cuts) is infinitely slower and is left out; when
    every draw is, the value is the bound ``Censored(1.0, "lower")`` (shown "≥ 1.00×", judged holds).

    Raises ``KeyError`` (then no verdict): HASFL's own ε unreachable (Θ None)."""
    h = result["hasfl"]["theta"]
    if h is None:
        raise KeyError("HASFL's Θ: ε is unreachable at these controls")
    th = [d["theta"] for ds in result["benchmarks"].values() for d in ds if d["theta"] is not None]
    if not th:          # every draw never reaches ε: each ratio is unbounded, so the bound >= 1 is all one can print
        return {"ours": [Censored(1.0, "lower")]}
    return {"ours": [min(th) / h]}


CLAIMS = [Claim("explore_theta_below_benchmarks", "HASFL's predicted Θ is below every benchmark's (eq. 42)",
                "Fig. 9", "consistently lower", NOTEBOOK, AtLeast(target=1.0, unit="×"), slowest_ratio,
                why="'consistently outperforms the other benchmarks' without a number: the smallest ratio over the "
                    "benchmarks and their draws at least 1 holds, else fails. A draw whose ε is unreachable is "
                    "infinitely slower; when every draw is, the ratio shows as ≥ 1.00×.")]


def claims(result: Mapping[str, Any]) -> list[Claim]:
    """The claims judged at ``result`` (the same at every state)."""
    return CLAIMS


def default_explorer(params: Mapping[str, Any]):
    """The explorer the notebook builds from its parameters ``params`` (its parameters cell's values)."""
    from fedlib.lab.hasfl import explore
    st, devices = explore.prepare(params["constants_from"], params["seed"], params["own_model"], params["devices"],
                                  params["devices_csv"])
    return explore.explorer(st, params["num_devices"], params["constants"], params["draws"],
                            params["timeline_benchmark"], devices, params["sweep_over"], params["sweep_points"])
