"""HIST experiments: cached sweeps (:func:`run_sweep`), the runs behind Figs. 2-4 (:func:`figure_configs`) and
their summary rows."""
from __future__ import annotations

from typing import Callable

from tqdm import tqdm

from ..data import TensorDataset, load_dataset
from .config import METHODS, HistConfig, rounds_for_budget
from .run import run_hist


def run_sweep(configs: list[HistConfig], store, dataset: TensorDataset | None = None, device: str = "auto",
              force: bool = False, progress: bool = True,
              runner: Callable[..., dict] = run_hist) -> list[dict]:
    """Run every config through ``store`` (a :class:`fedlib.core.ResultStore`); finished runs are cache hits.

    An interrupted sweep resumes where it stopped: each finished run was written atomically. The dataset is
    loaded once, on first need.

    Returns:
        The result records, in ``configs`` order.
    """
    cache: dict[str, TensorDataset] = {} if dataset is None else {dataset.name: dataset}

    def get_ds(name: str) -> TensorDataset:
        if name not in cache:
            cache[name] = load_dataset(name)
        return cache[name]

    out = []
    bar = tqdm(configs, desc="runs", disable=not progress)
    for cfg in bar:
        out.append(store.get_or_run(cfg.to_dict(), lambda c=cfg: runner(c, get_ds(c.dataset), device, progress),
                                    force=force))
    return out


def figure_configs(settings: list[str], num_cells: list[int], H: int, E: int, comm_budget_L0: float,
                   fig4_num_cells: int, fig4_E_over_H: list[int], fig4_H: list[int], fig4_global_rounds: int,
                   **common) -> dict[str, list[HistConfig]]:
    """The runs behind HIST Figs. 2-4 (spec "Experiments to reproduce").

    Args:
        settings: data settings (``"noniid"``, ``"cell_iid"``).
        num_cells: the N of Figs. 2-3 ({2, 3, 4, 5} in the paper).
        H, E: Figs. 2-3 intervals (40, 200).
        comm_budget_L0: per-client communication budget of Figs. 2-3 (x-axis range), units of L0; each run
            gets the global rounds :func:`rounds_for_budget` gives (equal compute for HIST and HFedAvg).
        fig4_num_cells: N of Fig. 4 (3).
        fig4_E_over_H: Fig. 4's E/H sweep ({5, 10, 15}) at H = ``H``.
        fig4_H: Fig. 4's H sweep ({20, 40, 60}) at E/H = ``E // H``.
        fig4_global_rounds: global synchronisations of each Fig. 4 run (its x-axis range).
        **common: other :class:`HistConfig` fields (lr, batch_size, seed, num_clients, ...).

    Returns:
        ``{"fig2": [...], "fig4_E_over_H": [...], "fig4_H": [...]}`` (Fig. 3 reuses ``fig2``'s runs).
    """
    fig2 = [HistConfig(method=m, setting=s, num_cells=n, H=H, E=E,
                       global_rounds=rounds_for_budget(m, n, H, E, comm_budget_L0), **common)
            for s in settings for n in num_cells for m in METHODS]
    eh = [HistConfig(method="hist", setting=s, num_cells=fig4_num_cells, H=H, E=k * H,
                     global_rounds=fig4_global_rounds, **common) for s in settings for k in fig4_E_over_H]
    hs = [HistConfig(method="hist", setting=s, num_cells=fig4_num_cells, H=h, E=(E // H) * h,
                     global_rounds=fig4_global_rounds, **common) for s in settings for h in fig4_H]
    return {"fig2": fig2, "fig4_E_over_H": eh, "fig4_H": hs}


def comm_to_target(record: dict, target_acc: float) -> float | None:
    """Per-client communication (L0) at the first global round whose test accuracy is >= ``target_acc``;
    ``None`` if the run never reaches it (HIST Fig. 3's y-axis)."""
    for acc, comm in zip(record["test_acc"], record["comm_client_L0"]):
        if acc >= target_acc:
            return comm
    return None


def summarize(records: list[dict], target_acc: float) -> list[dict]:
    """One metrics row per record: method, setting, N, H, E, final_test_acc, target_acc, comm_to_target,
    best_test_acc, comm_total_L0, global_rounds, elapsed_s."""
    rows = []
    for r in records:
        c = r["config"]
        rows.append({"method": c["method"], "setting": c["setting"], "N": c["num_cells"], "H": c["H"],
                     "E": c["E"], "global_rounds": c["global_rounds"], "final_test_acc": r["test_acc"][-1],
                     "best_test_acc": max(r["test_acc"]), "target_acc": target_acc,
                     "comm_to_target": comm_to_target(r, target_acc), "comm_total_L0": r["comm_client_L0"][-1],
                     "elapsed_s": r["elapsed_s"]})
    return rows
