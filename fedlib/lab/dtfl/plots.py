"""What ``dtfl_4_training`` draws and records beyond the paper for a DTFL run (:func:`diagnostics`). The figures of
the DTFL notebooks are drawn in the notebooks themselves."""
from __future__ import annotations

import numpy as np


def diagnostics(rec: dict, sim: dict, row: dict) -> dict:
    """Beyond the paper, for one DTFL run (its training record, simulated system and metrics row:
    :func:`fedlib.lab.dtfl.experiments.run_entry`'s ``record``, ``sim`` and ``row``): per evaluation the global
    model's test accuracy with md8 (``test_acc``) and with the top tier's averaged auxiliary head in its place
    (``test_acc_aux``, None before a client trained in the top tier; the md8 lag is their difference), and the tier
    histogram ``tier_counts`` ``[R][M]`` (participants per tier and round). Plain lists (JSON)."""
    tiers = np.asarray(sim["tiers"])
    part = (np.ones(tiers.shape, bool) if sim.get("participants") is None else np.asarray(sim["participants"], bool))
    counts = [[int(((tiers[r] == m) & part[r]).sum()) for m in range(1, row["M"] + 1)] for r in range(len(tiers))]
    return {"setting": row["setting"], "model": row["model"], "seed": row["seed"], "M": row["M"],
            "round": list(rec["round"]), "test_acc": list(rec["test_acc"]),
            "test_acc_aux": list(rec.get("test_acc_aux", [None] * len(rec["round"]))), "tier_counts": counts}
