"""The claim ``hist_explore`` judges, at the controls' state, and its default-state result for the generated text.

HIST (Fang et al., arXiv:2310.17890), Sec. III-B: *"HIST reduces the communication consumption of the global server,
edge server, and client to 1/N of what would be required by the standard hierarchical FedAvg algorithm."* The
explorer's table is that accounting (:func:`fedlib.hist.comm_per_round`, in L0), so the verdict checks the claim at
the controls' N, H, E and U: the largest of HIST's three loads per round over HFedAvg's must be at most 1/N. It
holds by the accounting's construction; what training shows at equal communication is
``hist_1_experiments``' verdict (accuracy, communication to 75 %).
"""
from __future__ import annotations

from typing import Any, Mapping

from fedlib.lab.verdicts import RESOLUTION_DIGITS, AtMost, Claim

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
    from fedlib.lab.hist import explore
    from fedlib.lab.hist.experiments import result_store
    committed = committed_store_dir(params["profile"])
    store = result_store(str(committed)) if committed is not None and committed.is_dir() else None
    return explore.explorer(params["profile"], params["settings"], N=params["N"], H=params["H"], E=params["E"],
                            num_clients=params["num_clients"], hidden=params["hidden"],
                            comm_budget_L0=params["comm_budget_L0"], gamma=params["gamma"],
                            bound_form=params["bound_form"], sweep=params["sweep"], store=store)
