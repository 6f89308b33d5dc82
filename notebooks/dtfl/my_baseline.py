"""A baseline of your own for ``dtfl_your_method``: FedAvgM, FedAvg with server momentum (Hsu, Qi and Brown,
"Measuring the Effects of Non-Identical Data Distribution for Federated Visual Classification", arXiv:1909.06335,
Algorithm 1 with server learning rate ``SERVER_LR`` and momentum ``BETA``), written as a server-side aggregation
hook of DTFL's engine baselines.

Every round the participating clients train one local epoch of the whole model (FedAvg: cut 8, every module on the
client), the engine forms eq. 1's N_k-weighted average, and then :class:`ServerMomentum` replaces it:
``v <- BETA v + (w_before - w_avg)``, ``w <- w_before - SERVER_LR v``, per parameter tensor (the batch-norm running
statistics keep the average). With ``BETA = 0`` and ``SERVER_LR = 1`` this is FedAvg exactly.

Named ``"my_baseline:fedavgm"``; the library calls ``fedavgm(cfg, data, rounds, participants, device, backend)``.
"""
import numpy as np
import torch

from fedlib.dtfl import run_engine

BETA = 0.9          # server momentum (the paper's best values lie in 0.7..0.99)
SERVER_LR = 1.0     # server learning rate (1: the momentum step alone)


class ServerMomentum:
    """``server_update(st, before, weights)`` hook of :func:`fedlib.dtfl.run_engine`, called once a round after
    the average (the engine state it sees: ``notebooks/dtfl/README.md``, "Your own method"): ``st.units[j]`` the
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
