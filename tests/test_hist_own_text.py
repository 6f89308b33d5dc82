"""The HIST worked example's comparison and closing text (fedlib.lab.hist.own.compare / what_it_shows) from
hand-made summary rows: the communication ratio is HFedAvg's over HIST's (issue 70's planted survivor: the ratio
inverted made the text state the opposite conclusion), the lead is HIST minus HFedAvg in points, a seed that misses
the target leaves the ratio out. Planted: the ratio inverted, the lead's sign flipped -> red."""
from fedlib.lab.hist.own import compare, what_it_shows


def _row(method, n, acc, comm, seed=0, setting="noniid"):
    return {"setting": setting, "N": n, "method": method, "final_test_acc": acc, "comm_to_target": comm,
            "seed": seed}


ROWS = [_row("hist", 2, 0.80, 10.0), _row("hist", 2, 0.78, 14.0, seed=1),
        _row("hfedavg", 2, 0.75, 36.0), _row("hfedavg", 2, 0.73, 36.0, seed=1),
        _row("hist", 3, 0.70, 20.0), _row("hfedavg", 3, 0.72, None)]


def test_the_ratio_is_hfedavgs_communication_over_hists_and_the_lead_hist_minus_hfedavg():
    by_n = {c["N"]: c for c in compare(ROWS)}
    assert by_n[2]["hist_comm"] == 12.0 and by_n[2]["hfedavg_comm"] == 36.0
    assert by_n[2]["comm_ratio"] == 3.0                       # 36 / 12: HFedAvg needs three times HIST's
    assert abs(by_n[2]["lead_points"] - 5.0) < 1e-9            # (0.79 - 0.74) x 100
    assert by_n[3]["comm_ratio"] is None and abs(by_n[3]["lead_points"] + 2.0) < 1e-9


def test_the_text_states_the_direction_the_numbers_show():
    text = str(what_it_shows(compare(ROWS), {"noniid": "fully non-iid"}, 0.6, 12))
    assert "HFedAvg needs 3.0 times HIST's communication" in text
    assert "HIST is ahead at 1 of 2 N by -2.00 to +5.00 points" in text
    assert "HFedAvg does not reach 60 % within the budget at N = 3" in text
