"""The HIST worked example's comparison and closing text, computed in ``hist_your_method``'s own cells (they were
``fedlib.lab.hist.own.compare`` / ``what_it_shows``): the cells run here on hand-made summary rows. The
communication ratio is HFedAvg's over HIST's (issue 70's planted survivor: the ratio inverted made the text state
the opposite conclusion), the lead is HIST minus HFedAvg in points, a seed that misses the target leaves the ratio
out. Planted: the ratio inverted, the lead's sign flipped -> red."""
from pathlib import Path

import nbformat
import numpy as np

from fedlib.hist.config import METHODS
from fedlib.lab import story
from fedlib.lab.hist import claims as hist_claims

NB = Path(__file__).resolve().parents[1] / "notebooks" / "hist" / "hist_your_method.ipynb"
#: the first line of each cell run here, in the notebook's order: the comparison, the spans, the sentences
CELLS = ("comparison = []", "spans = {}", "lines, leads = [], {}")


def _row(method, n, acc, comm, seed=0, setting="noniid"):
    return {"setting": setting, "N": n, "method": method, "final_test_acc": acc, "comm_to_target": comm,
            "seed": seed}


ROWS = [_row("hist", 2, 0.80, 10.0), _row("hist", 2, 0.78, 14.0, seed=1),
        _row("hfedavg", 2, 0.75, 36.0), _row("hfedavg", 2, 0.73, 36.0, seed=1),
        _row("hist", 3, 0.70, 20.0), _row("hfedavg", 3, 0.72, None)]


def _run(rows, target_acc=0.6, budget=12):
    """The notebook's three cells executed on ``rows``: their namespace (``comparison``, ``lines``)."""
    cells = [c.source for c in nbformat.read(NB, as_version=4).cells if c.cell_type == "code"]
    ns = dict(rows=rows, np=np, METHODS=METHODS, story=story, hist_claims=hist_claims, target_acc=target_acc,
              comm_budget_L0=budget, names={"noniid": "fully non-iid"})
    for first in CELLS:
        exec(compile(next(s for s in cells if s.startswith(first)), first, "exec"), ns)
    return ns


def test_the_ratio_is_hfedavgs_communication_over_hists_and_the_lead_hist_minus_hfedavg():
    by_n = {c["N"]: c for c in _run(ROWS)["comparison"]}
    assert by_n[2]["hist_comm"] == 12.0 and by_n[2]["hfedavg_comm"] == 36.0 and by_n[2]["seeds"] == 2
    assert by_n[2]["comm_ratio"] == 3.0                       # 36 / 12: HFedAvg needs three times HIST's
    assert abs(by_n[2]["lead_points"] - 5.0) < 1e-9            # (0.79 - 0.74) x 100
    assert by_n[3]["comm_ratio"] is None and abs(by_n[3]["lead_points"] + 2.0) < 1e-9


def test_the_text_states_the_direction_the_numbers_show():
    text = "\n".join(_run(ROWS)["lines"])
    assert "HFedAvg needs 3.0 times HIST's communication" in text
    assert "HIST is ahead at 1 of 2 N by -2.00 to +5.00 points" in text
    assert "HIST ends at 70.0 to 79.0 %, HFedAvg at 72.0 to 74.0 % after 12 L0 per client" in text
    assert "HFedAvg does not reach 60 % within the budget at N = 3" in text


def test_two_settings_compare_their_mean_leads():
    rows = ROWS + [dict(r, setting="my:part", final_test_acc=r["final_test_acc"] - (0.02 if r["method"] == "hist"
                                                                                    else 0)) for r in ROWS]
    lines = _run(rows)["lines"]
    # mean lead: noniid (5 - 2) / 2 = +1.50; the partition's HIST 2 points lower: -0.50
    assert lines[-1].startswith("- HIST's mean lead over the N is +1.50 points under fully non-iid and -0.50 points "
                                "under my:part: a change of -2.00 points")
