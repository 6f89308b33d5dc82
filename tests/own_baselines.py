"""Baselines of a user's own for DTFL's comparison, as a researcher would write them in a module of their own
(imported by path in the tests: ``"own_baselines:fedavg_half_clients"``), built from fedlib's public functions
only; not a test module. Each takes what the built-in baselines are computed from and returns
``fedlib.dtfl.run_baseline``'s record."""
import dataclasses

import numpy as np

from fedlib.dtfl import run_baseline


def fedavg_half_clients(cfg, data, rounds, participants, device, backend):
    """FedAvg with the updates of the first half of the clients only (clients 0..ceil(K/2) - 1 of each round's
    participants): the others sit every round out."""
    k = cfg.num_clients
    half = np.tile(np.arange(k) < -(-k // 2), (rounds, 1))
    here = half if participants is None else half & np.asarray(participants, bool)
    return run_baseline(cfg, data, "fedavg", rounds, here, device, backend=backend)


def fedavg_double_lr(cfg, data, rounds, participants, device, backend):
    """FedAvg with the clients' Adam learning rate doubled."""
    return run_baseline(dataclasses.replace(cfg, lr=2 * cfg.lr), data, "fedavg", rounds, participants, device,
                        backend=backend)


def returns_a_list(cfg, data, rounds, participants, device, backend):
    """Broken: no record."""
    return [0.1, 0.2]


def no_test_loss(cfg, data, rounds, participants, device, backend):
    """Broken: a record without its test losses."""
    return {"round": [0, rounds], "test_acc": [0.1, 0.2], "train_loss": [None, 1.0], "elapsed_s": [0.0, 1.0]}


def accuracy_in_percent(cfg, data, rounds, participants, device, backend):
    """Broken: accuracies in percent."""
    return {"round": [0, rounds], "test_acc": [10.0, 20.0], "test_loss": [2.3, 2.0], "train_loss": [None, 1.0],
            "elapsed_s": [0.0, 1.0]}


def too_few_arguments(cfg, data):
    """Broken: not the baselines' parameters."""
    return {}


class NotABaseline:
    """Broken: a class that is no TierScheduler."""


NOT_CALLABLE = 3
