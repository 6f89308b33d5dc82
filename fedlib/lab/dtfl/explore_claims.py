"""The claim ``dtfl_explore`` judges, at the controls' state, and its default-state result for the generated text.

DTFL (arXiv:2312.05642), abstract and Sec. 4.2: DTFL *"can significantly reduce the training time"* against FedAvg
and the other baselines. The explorer times one round on the library's time model (Sec. 3.3, eq. 5) for the
clients it draws or is given: the scheduler's tiers (eq. 6) against FedAvg, which trains the whole model on every
client. The verdict judges that round, as a prediction of the time model (nothing is trained): FedAvg's round over
DTFL's must exceed 1 (the paper gives no number for one round, so there is no partly band). The trained time to
target is judged in ``dtfl_5_baselines`` (Table 3).
"""
from __future__ import annotations

from typing import Any, Mapping

from fedlib.lab.verdicts import AtLeast, Claim

NOTEBOOK = "dtfl_explore"


def round_speedup(result: Mapping[str, Any]) -> dict:
    """``{"ours": [FedAvg's round / DTFL's round]}`` (×; each round the slowest client's T = max_k T_k of eq. 5,
    s). Raises ``KeyError`` when ``result`` lacks the round times (then no verdict)."""
    return {"ours": [result["fedavg_round_s"] / result["dtfl_round_s"]]}


CLAIMS = [Claim("explore_round_faster", "DTFL's round is shorter than FedAvg's (time model, eq. 5)", "Sec. 4.2",
                "reduces training time", NOTEBOOK, AtLeast(target=1.0, unit="×"), round_speedup,
                why="'DTFL can significantly reduce the training time' without a number for one round: faster "
                    "(FedAvg / DTFL above 1) holds, else fails.")]


def claims(result: Mapping[str, Any]) -> list[Claim]:
    """The claims judged at ``result`` (the same at every state)."""
    return CLAIMS


def default_explorer(params: Mapping[str, Any]):
    """The explorer the notebook builds from its parameters ``params`` (its parameters cell's values)."""
    from fedlib.lab.dtfl import explore
    keys = ("model", "width", "dataset", "num_clients", "num_tiers", "samples_per_client", "clients_from",
            "cpus_range", "mbps_range", "seed", "clients_text", "clients_csv", "core_gflops", "server_gflops")
    return explore.explorer(**{k: params[k] for k in keys})
