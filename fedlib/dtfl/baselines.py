"""DTFL's engine baselines (Sec. 4.1): FedAvg, FedYogi and SplitFed on the shared split engine, with the same
data, model family, client optimiser (Adam, lr 1e-3, state kept across rounds), local epoch and evaluation as
DTFL (:func:`fedlib.dtfl.run_engine`), so that only the algorithm differs. FedGKT is in :mod:`.fedgkt`.

- **FedAvg** (McMahan et al. 2017): every client trains the whole model (cut 8 = all modules on the client) for
  one local epoch; the global model is the N_k-weighted average of the participants' models.
- **FedYogi** (Reddi et al. 2020, Algorithm 2 "FedYogi"): the same local training, then the server treats the
  averaged update Δ = Σ_k w_k θ_k − θ as a pseudo-gradient and applies Yogi to the parameters:
  m <- β1·m + (1 − β1)·Δ; v <- v − (1 − β2)·Δ²·sign(v − Δ²); θ <- θ + η·m / (√v + τ), with m_0 = 0, v_0 = τ².
  **Choices** (the DTFL paper gives none): η = 1e-2, β1 = 0.9, β2 = 0.99, τ = 1e-3 (Reddi et al.'s defaults for
  β and τ and the middle of their η grid for CIFAR-10); BatchNorm running statistics are averaged like FedAvg's
  (they are not gradients); clients keep DTFL's Adam (Reddi et al. use client SGD) so that the client work is the
  same for every method.
- **SplitFed** (SFL-V1, Thapa et al. 2022): cut after md2 for every client (the paper's choice); the server trains
  a per-client copy of md3..md8 on the smashed data and returns the activation gradient each batch (the engine's
  end-to-end path through the cut); after the local epoch the client parts and the server copies are averaged
  with weights N_k (the engine's :func:`fedlib.split.aggregate`).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import torch

from ..core.validate import check_choice, check_float, check_instance, check_int
from ..data import TensorDataset
from .fedgkt import GKT_SERVER_EPOCHS, run_fedgkt
from .run import run_engine
from .training import DtflConfig

#: cut (modules on the client) of each engine baseline
BASELINE_CUTS = {"fedavg": 8, "fedyogi": 8, "splitfed": 2}


@dataclass(frozen=True)
class YogiConfig:
    """FedYogi's server optimiser (module docstring): ``eta`` (server lr > 0), ``beta1`` / ``beta2`` in [0, 1),
    ``tau`` (> 0, adaptivity). Raises ``ValueError`` naming a value outside its range."""

    eta: float = 1e-2
    beta1: float = 0.9
    beta2: float = 0.99
    tau: float = 1e-3

    def __post_init__(self):
        check_float("eta", self.eta, 0, low_open=True)
        check_float("tau", self.tau, 0, low_open=True)
        for name in ("beta1", "beta2"):
            check_float(name, getattr(self, name), 0, 1, high_open=True)

    def to_dict(self) -> dict:
        return asdict(self)


def yogi_update(theta: dict, delta: dict, m: dict, v: dict, cfg: YogiConfig) -> dict:
    """One Yogi server step (Reddi et al. 2020, Algorithm 2), per tensor; returns the new parameters (new
    tensors) and updates ``m`` and ``v`` in place (missing entries start at m = 0, v = τ²).

    Args:
        theta: name -> current global parameter. delta: name -> pseudo-gradient Δ (averaged client model minus
            ``theta``; same shapes). m, v: the server's first / second moment state. cfg: :class:`YogiConfig`.

    Raises:
        ValueError: ``delta`` with other names or shapes than ``theta``, or a non-finite Δ.
    """
    for name, value in (("theta", theta), ("delta", delta), ("m", m), ("v", v)):
        check_instance(name, value, dict, "a dict name -> tensor")
    check_instance("cfg", cfg, YogiConfig)
    if set(delta) != set(theta) or any(delta[k].shape != theta[k].shape for k in theta):
        raise ValueError("delta must have the names and shapes of theta")
    out = {}
    for k, x in theta.items():
        d = delta[k]
        if not bool(torch.isfinite(d).all()):
            raise ValueError(f"delta[{k!r}] has non-finite values")
        mk = m.get(k, torch.zeros_like(x))
        vk = v.get(k, torch.full_like(x, cfg.tau ** 2))
        mk = cfg.beta1 * mk + (1 - cfg.beta1) * d
        d2 = d * d
        vk = vk - (1 - cfg.beta2) * d2 * torch.sign(vk - d2)
        m[k], v[k] = mk, vk
        out[k] = x + cfg.eta * mk / (vk.sqrt() + cfg.tau)
    return out


class _Yogi:
    """``server_update`` hook of :func:`fedlib.dtfl.run_engine`: Yogi on the parameters of every unit."""

    def __init__(self, cfg: YogiConfig):
        self.cfg, self.m, self.v = cfg, {}, {}

    def __call__(self, st, before: list, weights) -> None:
        for j, copies in enumerate(st.units):
            avg = copies[0]                       # after aggregate() every copy holds the weighted average
            names = st.pnames[j]
            theta = {f"{j}.{n}": before[j][n] for n in names}
            delta = {f"{j}.{n}": avg[n] - before[j][n] for n in names}
            new = yogi_update(theta, delta, self.m, self.v, self.cfg)
            with torch.no_grad():
                for c in copies:
                    for n in names:
                        c[n].copy_(new[f"{j}.{n}"])


def run_baseline(cfg: DtflConfig, data: TensorDataset, method: str, rounds: int, participants=None,
                 device: str = "cpu", yogi: YogiConfig | None = None, progress=None,
                 keep_model: bool = False, backend: str = "auto") -> dict:
    """Train ``rounds`` rounds of ``method`` (``fedavg``, ``fedyogi``, ``splitfed``; module docstring) on the
    engine; record as :func:`fedlib.dtfl.run_dtfl` (global-model test accuracy per evaluation) plus
    ``method`` and, for FedYogi, ``yogi`` (its settings).

    Args:
        cfg: the training (model, data, clients, batch, Adam lr, partition, seed). rounds: R >= 1.
        participants: ``[R, K]`` bools (None = all clients every round). yogi: FedYogi's server optimiser
            (default :class:`YogiConfig`); refused for the other methods. device, progress, keep_model, backend: as
            :func:`fedlib.dtfl.run_dtfl` / :func:`fedlib.dtfl.run_engine`.

    Raises:
        ValueError / ParameterTypeError: unknown method, rounds < 1, ``yogi`` given to another method, bad
            participants (naming them).
    """
    check_instance("cfg", cfg, DtflConfig)
    check_choice("method", method, tuple(BASELINE_CUTS))
    rounds = check_int("rounds", rounds, 1)
    check_instance("yogi", yogi, YogiConfig, allow_none=True)
    if yogi is not None and method != "fedyogi":
        raise ValueError(f"yogi settings apply to method 'fedyogi' only, got method {method!r}")
    hook = _Yogi(yogi or YogiConfig()) if method == "fedyogi" else None
    cuts = np.full((rounds, cfg.num_clients), BASELINE_CUTS[method], dtype=np.int64)
    rec = run_engine(cfg, data, cuts, method, device, progress, keep_model, participants, server_update=hook,
                     backend=backend)
    if hook is not None:
        rec["yogi"] = hook.cfg.to_dict()
    return rec


def baseline_record(cfg: DtflConfig, data: TensorDataset, method: str, rounds: int, participants=None,
                    device: str = "cpu", backend: str = "auto") -> dict:
    """The record a ``dtfl_baseline`` key stores: ``method``'s ``rounds`` rounds on ``cfg``'s clients and ``data``
    (``fedavg`` / ``fedyogi``: :func:`run_baseline` on the split engine's ``backend``; ``fedgkt``:
    :func:`fedlib.dtfl.fedgkt.run_fedgkt` with :data:`fedlib.dtfl.fedgkt.GKT_SERVER_EPOCHS` server epochs per round),
    ``participants`` ``[R, K]`` (``None``: all), plus ``data_source``.

    Raises:
        ValueError: an unknown method (and what the runs raise)."""
    check_choice("method", method, ("fedavg", "fedyogi", "fedgkt"))
    if method == "fedgkt":
        rec = run_fedgkt(cfg, data, rounds, participants, device, server_epochs=GKT_SERVER_EPOCHS)
    else:
        rec = run_baseline(cfg, data, method, rounds, participants, device, backend=backend)
    return dict(rec, data_source=data.source)
