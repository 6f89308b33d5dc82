"""Several runs of one model shape as rows of one stacked state: one batched call per unit advances them all.

A run's per-device state on the stacked backend is ``[N, ...]`` (:class:`fedlib.split.stacked.StackedState`). R runs of the
same model, width, number of devices and optimiser (a sweep's seeds, say) can be stacked once more, ``[R·N, ...]``:
run r owns rows ``r·N .. r·N + N - 1``. A training round of the batched state (:func:`fedlib.split.stacked.train_round_stacked`,
every run's devices in one call per unit) is each run's round, because nothing in a round mixes rows (the grouped
layout keeps devices apart, batch norm is per device, optimiser steps are per row), as long as the round does
not average server copies across devices (``sync_copies=False``, DTFL's rounds; HASFL's shared common part would mix
runs and is refused here). What does mix rows, aggregation and a device's move to another cut, is done per run
through :func:`run_view`: a :class:`fedlib.split.stacked.StackedState` over run r's rows, whose tensors are views into the
batched stacks, so the stacked backend's own ``aggregate_stacked``, ``set_decision_stacked``,
``global_model_stacked`` act on that run alone and write through. A view's ``b`` / ``cuts`` are written back with
:func:`sync_view`.

Prior art (outside federated learning): HFTA's horizontally fused training of many models (Wang et al., MLSys 2021)
and torch.func's model ensembling; here the fused models are whole federated runs. The tests check each run of a
batch against the same run alone, in float64 (``tests/dtfl_batched.py``).
"""
from __future__ import annotations

import copy

import numpy as np
import torch

from fedlib.core.validate import check_instance, check_int, check_list
from fedlib.split.stacked import StackedState, _new_cut


def _cat(dicts: list[dict]) -> dict:
    return {k: torch.cat([d[k] for d in dicts]) for k in dicts[0]}


def _slice(d: dict, lo: int, hi: int) -> dict:
    return {k: v[lo:hi] for k, v in d.items()}


def concat_states(states: list[StackedState], cuts: tuple = ()) -> StackedState:
    """One stacked state holding ``states``' rows in order (run r: rows ``r·N .. r·N + N - 1``). Every run gets the
    auxiliary stacks of every cut in ``cuts`` and of any run (created from each run's own first head, as a run
    entering that cut would; only the rows at that cut are ever read), so that no run's cut change has to grow the
    batched state.

    Raises:
        ValueError: fewer than one state; the runs differ in model structure, number of devices, mode, optimiser,
            local loss or dtype; a run is in ``common`` mode (its shared part would mix the runs).
    """
    states = check_list("states", states, lambda k, v: check_instance(k, v, StackedState, "a StackedState"))
    first = states[0]
    for i, st in enumerate(states):
        if st.mode != "copies":
            raise ValueError(f"states[{i}] is in {st.mode!r} mode: only 'copies' mode runs can share a batch "
                             "(a shared server part would mix the runs)")
        same = (repr(st.model) == repr(first.model), st.num_devices == first.num_devices,
                st.opt_cfg == first.opt_cfg, st.local_loss == first.local_loss,
                st.per[0][st.pnames[0][0]].dtype == first.per[0][first.pnames[0][0]].dtype)
        if not all(same):
            raise ValueError(f"states[{i}] differs from states[0] in model, number of devices, optimiser, local loss "
                             f"or dtype: only runs of one shape can share a batch")
    if first.local_loss:
        wanted = sorted(set(int(c) for c in cuts) | {c for st in states for c in st.aux})
        for st in states:
            for c in wanted:
                if c not in st.aux and c < st.num_units:
                    from fedlib.split.engine import _new_aux
                    from fedlib.split.stacked import _HeadMaker
                    _new_cut(st, c, _new_aux(_HeadMaker(st), c, st.seed))
    out = copy.copy(first)
    out.per = [_cat([st.per[j] for st in states]) for j in range(first.num_units)]
    out.opt = [{name: _cat([st.opt[j][name] for st in states]) for name in first.opt[j]}
               for j in range(first.num_units)]
    out.steps = [np.concatenate([st.steps[j] for st in states]) for j in range(first.num_units)]
    out.aux = {c: _cat([st.aux[c] for st in states]) for c in first.aux}
    out.aux_opt = {c: {name: _cat([st.aux_opt[c][name] for st in states]) for name in first.aux_opt[c]}
                   for c in first.aux_opt}
    out.aux_steps = {c: np.concatenate([st.aux_steps[c] for st in states]) for c in first.aux_steps}
    out.aux_templates = dict(first.aux_templates)
    out.b = np.concatenate([st.b for st in states])
    out.cuts = np.concatenate([st.cuts for st in states])
    out.grouped = {}
    out.round, out.samples = 0, 0
    return out


def run_view(st: StackedState, run: int, n: int, seed: int) -> StackedState:
    """Run ``run``'s rows of the batched ``st`` (``n`` devices per run) as a state of their own: its tensors are
    views (in-place changes write through), its ``b`` / ``cuts`` copies (write them back with :func:`sync_view`);
    ``seed`` is the run's (new auxiliary heads are drawn from it).

    Raises:
        ValueError: ``run`` or ``n`` out of range.
    """
    check_int("n", n, 1)
    check_int("run", run, 0, len(st.b) // n - 1)
    lo, hi = run * n, (run + 1) * n
    v = copy.copy(st)
    v.per = [_slice(d, lo, hi) for d in st.per]
    v.opt = [{name: _slice(s, lo, hi) for name, s in d.items()} for d in st.opt]
    v.steps = [a[lo:hi] for a in st.steps]
    v.aux = {c: _slice(d, lo, hi) for c, d in st.aux.items()}
    v.aux_opt = {c: {name: _slice(s, lo, hi) for name, s in d.items()} for c, d in st.aux_opt.items()}
    v.aux_steps = {c: a[lo:hi] for c, a in st.aux_steps.items()}
    v.b, v.cuts, v.seed = st.b[lo:hi].copy(), st.cuts[lo:hi].copy(), seed
    return v


def sync_view(st: StackedState, view: StackedState, run: int) -> None:
    """Write ``view``'s ``b`` and ``cuts`` (a decision set on it) back into the batched ``st``.

    Raises:
        ValueError: the view grew an auxiliary stack the batched state lacks (create it in :func:`concat_states`).
    """
    n = len(view.b)
    missing = sorted(set(view.aux) - set(st.aux))
    if missing:
        raise ValueError(f"run {run} entered cuts {missing} that the batched state has no auxiliary stack for: "
                         f"pass them to concat_states(cuts=...)")
    st.b[run * n:(run + 1) * n] = view.b
    st.cuts[run * n:(run + 1) * n] = view.cuts
