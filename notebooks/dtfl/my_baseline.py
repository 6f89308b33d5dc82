"""A baseline of your own for ``dtfl_your_method``: FedAvgM, FedAvg with server momentum (Hsu, Qi and Brown,
"Measuring the Effects of Non-Identical Data Distribution for Federated Visual Classification", arXiv:1909.06335,
Algorithm 1 with server learning rate ``SERVER_LR`` and momentum ``BETA``), written as a server-side aggregation
hook of DTFL's engine baselines.

Every round the participating clients train one local epoch of the whole model (FedAvg: cut 8, every module on the
client), the engine forms eq. 1's N_k-weighted average, and then :class:`ServerMomentum` replaces it:
``v <- BETA v + (w_before - w_avg)``, ``w <- w_before - SERVER_LR v``, per parameter tensor (the batch-norm running
statistics keep the average). With ``BETA = 0`` and ``SERVER_LR = 1`` this is FedAvg exactly.

Named ``"my_baseline:fedavgm"``; the library calls ``fedavgm(cfg, data, rounds, participants, device, backend)``.

What a ``server_update(st, before, weights)`` hook of :func:`fedlib.dtfl.run_engine` sees, once a round after eq. 1's
N_k-weighted average over the round's participants (shapes for ResNet-20 at width 0.25 on Fashion-MNIST, K = 10):

| name | what | shape / type |
|---|---|---|
| `st.units[j][k]` | unit j + 1 (md1..md8, j = 0..7) as held by copy k (k = 0..K-1: FedAvg keeps one copy of every unit per client); after the average every copy holds it | dict name -> tensor, the unit's parameters and buffers: md1 `"0.weight"` [4, 1, 3, 3], `"1.weight"`, `"1.bias"`, `"1.running_mean"`, `"1.running_var"` [4], `"1.num_batches_tracked"` []; md8 `"2.weight"` [10, 64], `"2.bias"` [10] |
| `st.pnames[j]` | the names of unit j + 1's parameters (its buffers are in `st.units` only) | list of str: md1 `["0.weight", "1.weight", "1.bias"]` |
| `before[j]` | unit j + 1 of the global model at the round's start | dict name -> tensor, as `st.units[j][k]` |
| `weights` | each client's weight in the average: N_k / N renormalised over the round's participants, 0 for the others | numpy `[K]`, sums to 1 |
| `st.cuts`, `st.b` | each client's cut (8 for FedAvg) and batch size | numpy int `[K]` |
| `st.opt[j][k]` | the Adam state of that copy (`exp_avg`, `exp_avg_sq` per tensor name; a client changing cut restarts it) | dict |
| `st.smashed_shapes[j]` | the per-sample output shape of unit j + 1 | tuple: (4, 28, 28) after md1 .. (10,) after md8 |

Write the new global units into every copy in place (``copy[name].copy_(new)``, under ``torch.no_grad()``).
"""
import numpy as np
import torch

from fedlib.dtfl import run_engine

BETA = 0.9          # server momentum (the paper's best values lie in 0.7..0.99)
SERVER_LR = 1.0     # server learning rate (1: the momentum step alone)


class ServerMomentum:
    """``server_update(st, before, weights)`` hook of :func:`fedlib.dtfl.run_engine`, called once a round after
    the average (the engine state it sees: the table in this module's docstring): ``st.units[j]`` the
    copies of unit j + 1 (dicts name -> tensor, each holding the round's average), ``st.pnames[j]`` its parameter
    names, ``before[j]`` its global tensors at the round's start. Keeps the velocity per tensor across rounds."""

    def __init__(self, beta: float, lr: float):
        self.beta, self.lr, self.velocity = beta, lr, {}

    def __call__(self, st, before, weights):
        for j, copies in enumerate(st.units):
            for name in st.pnames[j]:
                step = before[j][name] - copies[0][name]                  # the round's pseudo-gradient
                v = self.beta * self.velocity.get((j, name), torch.zeros_like(step)) + step
                self.velocity[(j, name)] = v
                new = before[j][name] - self.lr * v
                with torch.no_grad():
                    for copy in copies:                                  # every copy holds the new global unit
                        copy[name].copy_(new)


def fedavgm(cfg, data, rounds, participants, device, backend):
    """FedAvgM on DTFL's clients: FedAvg's training (every module on the client, cut 8) with
    :class:`ServerMomentum` after each round's average. Returns :func:`fedlib.dtfl.run_engine`'s record."""
    cuts = np.full((rounds, cfg.num_clients), 8)
    return run_engine(cfg, data, cuts, "fedavg", device, participants=participants,
                      server_update=ServerMomentum(BETA, SERVER_LR), backend=backend)
