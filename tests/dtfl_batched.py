"""Several DTFL (or FedAvg / SplitFed) runs of one shape trained together, as rows of one stacked call
(:func:`run_batched`): a sweep's seeds advance in one batched call per unit instead of one run after another.

Each run is :func:`fedlib.dtfl.run.run_engine`'s run, round for round: its own data partition and batch order
(its seed's ``data`` stream), initial model, tiers per round (``cuts``), participants, aggregation (eq. 1 over its
own clients), tier heads and evaluations. Only the execution is shared: every local step trains the R runs' K
clients as R·K rows of the stacked backend (``tests/stacked_runs.py``); a run that has run out of local
batches in a step sits it out (its rows untouched, as its clients would be alone). So each run's record equals the
run trained alone by ``run_engine`` on the stacked backend, up to the order of floating-point sums (the tests
check this in float64 against each run alone), and the records are not stored (no key of their own; train the
record you cite alone, or compare).

Runs may differ in their seed, tiers and participants; everything that sets a tensor's shape must agree (model,
width, K, batch size, optimiser, data subsets, method). Not here: FedYogi (a server update per run), the privacy
hooks and FedGKT.
"""
from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import torch

from fedlib.core.seeding import resolve_device, torch_generator
from fedlib.core.validate import check_choice, check_instance, check_list
from fedlib.data import TensorDataset
from fedlib.split import SplitConfig, build_model, evaluate
from fedlib.split.backends import STACKED_VARIANTS, device_aux, set_device_aux, split_backend
from fedlib.split.ops import weighted_mean
from tests.stacked_runs import concat_states, run_view, sync_view
from fedlib.dtfl.local_loss import local_loss_step
from fedlib.dtfl.tiers import aux_head_factory
from fedlib.dtfl.training import TOP_CUT, DtflConfig, Functional, check_cuts, check_participants, client_data, evaluate_heads, subset

#: what may differ between the runs of one batch (every other field of :class:`DtflConfig` must agree)
MAY_DIFFER = ("seed",)


def _check_runs(cfgs: list, cuts: list, participants: list | None, local: bool) -> tuple[list, list]:
    cfgs = check_list("cfgs", cfgs, lambda k, v: check_instance(k, v, DtflConfig))
    seeds = [c.seed for c in cfgs]
    twice = sorted({s for s in seeds if seeds.count(s) > 1})
    if twice:                       # the same run twice would be reported as two seeds
        raise ValueError(f"cfgs: seed(s) {twice} given more than once ({seeds}); runs of one batch need distinct "
                         "seeds (the same seed trains the same run)")
    base = replace(cfgs[0], seed=0)
    for i, c in enumerate(cfgs):
        if replace(c, seed=0) != base:
            diff = sorted(k for k, v in vars(replace(c, seed=0)).items() if getattr(base, k) != v)
            raise ValueError(f"cfgs[{i}] differs from cfgs[0] in {diff}: runs of one batch may differ only in "
                             f"{list(MAY_DIFFER)}")
    cuts = check_list("cuts", cuts, min_len=len(cfgs))
    if len(cuts) != len(cfgs):
        raise ValueError(f"cuts must hold one [rounds, K] array per run ({len(cfgs)}), got {len(cuts)}")
    cuts = [check_cuts(c, cfgs[0].num_clients, high=7 if local else 8) for c in cuts]
    if len({len(c) for c in cuts}) != 1:
        raise ValueError(f"every run must have the same number of rounds, got {[len(c) for c in cuts]}")
    if participants is None:
        participants = [None] * len(cfgs)
    participants = check_list("participants", participants, min_len=len(cfgs))
    if len(participants) != len(cfgs):
        raise ValueError(f"participants must hold one entry per run ({len(cfgs)}) or be None")
    part = [check_participants(p, len(cuts[0]), cfgs[0].num_clients) for p in participants]
    return cuts, part


def run_batched(cfgs: list, data: TensorDataset, cuts: list, method: str = "dtfl", device: str = "cpu",
                participants: list | None = None, backend: str = "stacked") -> list[dict]:
    """Train R runs of one shape together (module docstring); returns their records, in order.

    Args:
        cfgs: R >= 1 :class:`DtflConfig` that differ only in ``seed``, each seed once. data: the dataset (``cfg.dataset``'s).
        cuts: per run an ``[rounds, K]`` array of tiers (1..7 for DTFL, 1..8 for the baselines; the same number of
            rounds in every run). method: ``"dtfl"``, ``"fedavg"`` or ``"splitfed"``. device: ``"cpu"``,
            ``"cuda"``, ``"auto"``. participants: None, or per run None / a ``[rounds, K]`` bool mask.
        backend: a stacked variant (:data:`fedlib.split.backends.STACKED_VARIANTS`).

    Returns:
        per run the record of :func:`fedlib.dtfl.run.run_engine` (``round``, ``test_acc``, ``test_loss``,
        ``train_loss``, ``elapsed_s`` (s, the batch's wall clock), ``test_acc_aux`` / ``test_loss_aux`` for DTFL,
        ``config``, ``method``, ``device``, ``samples_per_client``), with ``"backend"`` and ``"batched": R``.

    Raises:
        ValueError: no run, a seed given twice, runs that differ in more than their seed, cuts or participants of
            the wrong shape, an unknown method or backend, data of another dataset.
    """
    check_choice("method", method, ("dtfl", "fedavg", "splitfed"))
    check_choice("backend", backend, tuple(STACKED_VARIANTS))
    check_instance("data", data, TensorDataset, "a fedlib.data.TensorDataset")
    local = method == "dtfl"
    cuts, part = _check_runs(cfgs, cuts, participants, local)
    cfg0 = cfgs[0]
    if data.name != cfg0.dataset:
        raise ValueError(f"data is {data.name!r}, but the configs say dataset={cfg0.dataset!r}")
    t0 = time.perf_counter()
    dev = resolve_device(device)
    f = split_backend(backend)
    step = local_loss_step(backend) if local else None
    ds = subset(data, cfg0.train_subset, cfg0.test_subset)
    x_train, y_train, x_test, y_test = (t.to(dev) for t in (ds.x_train, ds.y_train, ds.x_test, ds.y_test))
    shape, k, b, n_runs = tuple(ds.x_train.shape[1:]), cfg0.num_clients, cfg0.batch_size, len(cfgs)
    runs = []
    for cfg, c in zip(cfgs, cuts):
        parts = client_data(cfg, ds.y_train.numpy())
        sizes = np.array([len(p) for p in parts], dtype=float)
        scfg = SplitConfig(model=cfg.model, width=cfg.width, num_devices=k, batch_sizes=(b,) * k,
                           cuts=tuple(int(v) for v in c[0]), interval=1, lr=cfg.lr, eps=cfg.eps, optimizer="adam",
                           mode="copies", local_loss=local, rounds=len(c), seed=cfg.seed)
        st = f.init_state(scfg, build_model(scfg, shape[0], shape[1], ds.num_classes), shape, dev,
                             aux_head_factory(ds.num_classes) if local else None, channels_last=cfg.channels_last)
        rec = {"config": cfg.to_dict(), "method": method, "device": str(dev), "backend": backend,
               "batched": n_runs, "samples_per_client": sizes.astype(int).tolist(), "round": [], "test_acc": [],
               "test_loss": [], "train_loss": [], "elapsed_s": []}
        if local:
            rec.update(test_acc_aux=[], test_loss_aux=[])
        runs.append({"cfg": cfg, "state": st, "weights": sizes / sizes.sum(), "bank": {}, "rec": rec, "loss": None,
                     "parts": [torch.from_numpy(np.asarray(p, dtype=np.int64)) for p in parts],
                     "gen": torch_generator(cfg.seed, "data")})
    every_cut = sorted({int(v) for c in cuts for v in np.unique(c)}) if local else []
    st = concat_states([r["state"] for r in runs], cuts=tuple(v for v in every_cut if v < 8))

    def record(i, rnd):
        run, view = runs[i], run_view(st, i, k, runs[i]["cfg"].seed)
        model = f.global_model(view, run["weights"])
        top = run["bank"].get(TOP_CUT) if local else None
        if top is None:
            (acc, tl), aux = evaluate(model, x_test, y_test), (None, None)
        else:
            head = Functional(st.aux_templates[TOP_CUT], top)
            (acc, tl), aux = evaluate_heads(model[:TOP_CUT], [model[TOP_CUT:], head], x_test, y_test)
        rec = run["rec"]
        for key, v in (("round", rnd), ("test_acc", acc), ("test_loss", tl),
                       ("train_loss", None if run["loss"] is None else float(run["loss"])),
                       ("elapsed_s", time.perf_counter() - t0)):
            rec[key].append(v)
        if local:
            rec["test_acc_aux"].append(aux[0])
            rec["test_loss_aux"].append(aux[1])

    for i in range(n_runs):
        record(i, 0)
    for rnd in range(1, len(cuts[0]) + 1):
        orders = []
        for i, run in enumerate(runs):
            round_cuts, here = cuts[i][rnd - 1], part[i][rnd - 1]
            view = run_view(st, i, k, run["cfg"].seed)
            changed = np.flatnonzero(round_cuts != view.cuts)
            f.set_decision(view, (b,) * k, round_cuts, weights=run["weights"], seed=run["cfg"].seed)
            for c in changed:
                if local and int(round_cuts[c]) in run["bank"]:
                    set_device_aux(view, c, run["bank"][int(round_cuts[c])])
            sync_view(st, view, i)
            order = [p[torch.randperm(len(p), generator=run["gen"])].to(dev) for p in run["parts"]]
            orders.append([o if here[c] else o[:0] for c, o in enumerate(order)])
        steps = [max(-(-len(p) // b) for p in o) for o in orders]
        for s in range(max(steps)):
            xs, ys, owner = [], [], []
            for i, o in enumerate(orders):
                for c, p in enumerate(o):
                    idx = p[s * b:(s + 1) * b] if s < steps[i] and s * b < len(p) else None
                    xs.append(None if idx is None else x_train[idx])
                    ys.append(None if idx is None else y_train[idx])
                    if idx is not None:
                        owner.append(i)
            losses = f.train_round_nosync(st, xs, ys, None, sync_copies=False, local_step=step, per_device_loss=True)
            owner = np.asarray(owner)
            for i in set(owner.tolist()):        # each run's mean main loss of its last step (run_engine's loss)
                runs[i]["loss"] = losses[torch.from_numpy(np.flatnonzero(owner == i)).to(losses.device)].mean()
        for i, run in enumerate(runs):
            here = part[i][rnd - 1]
            view = run_view(st, i, k, run["cfg"].seed)
            w_round = np.where(here, run["weights"], 0.0)
            f.aggregate(view, w_round / w_round.sum())             # eq. 1 + aux heads within each tier
            if local:
                for c in set(int(v) for v in view.cuts):
                    same = [d for d in range(k) if view.cuts[d] == c and here[d]]
                    if same:
                        run["bank"][c] = weighted_mean([device_aux(view, same[0])], [1.0])
            if rnd % run["cfg"].eval_every == 0 or rnd == len(cuts[0]):
                record(i, rnd)
    return [r["rec"] for r in runs]
