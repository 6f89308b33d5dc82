"""HASFL problem (41): an instance (:class:`Problem`), a solution (:class:`Decision`), the objective Θ (eq. 42)
and the constraints C1-C5, shared by the optimiser's blocks (:mod:`.p1`, :mod:`.p2`, :mod:`.bcd`)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...core.validate import check_array, check_float, check_instance, check_int, check_list
from ...split import EdgeDevices, LayerProfile, Servers, memory_bits
from .latency import round_latency
from .theory import HasflConstants, bound_floor

@dataclass(frozen=True)
class Problem:
    """One instance of problem (41).

    Attributes:
        profile: model profile. devices, servers: the system. constants: Theorem 1's constants.
        gamma: step size γ (<= 1/β). eps: target ε of C1. interval: I, aggregation interval.
        allowed_cuts: cut layers that may be chosen (default all 1..L).
        max_batch: optional upper bound on every b_i (the paper has none; RBS draws from 1..64).
    """

    profile: LayerProfile
    devices: EdgeDevices
    servers: Servers
    constants: HasflConstants
    gamma: float
    eps: float
    interval: int
    allowed_cuts: tuple = ()
    max_batch: int | None = None

    def __post_init__(self):
        check_instance("profile", self.profile, LayerProfile, "a fedlib.split.LayerProfile")
        check_instance("devices", self.devices, EdgeDevices, "fedlib.split.EdgeDevices")
        check_instance("servers", self.servers, Servers, "fedlib.split.Servers")
        check_instance("constants", self.constants, HasflConstants)
        check_int("interval", self.interval, 1)
        check_float("eps", self.eps, 0, low_open=True)
        check_float("gamma", self.gamma, 0, low_open=True)
        if self.max_batch is not None:
            check_int("max_batch", self.max_batch, 1, extra=" or None")
        check_list("allowed_cuts", self.allowed_cuts, lambda k, v: check_int(k, v, 1, self.profile.num_layers),
                   min_len=0)
        if len(self.constants.sigma2) != self.profile.num_layers:
            raise ValueError(f"constants have {len(self.constants.sigma2)} layers, the profile "
                             f"{self.profile.num_layers}")
        if not 0 < self.gamma <= 1 / self.constants.beta:
            raise ValueError(f"gamma must satisfy 0 < gamma <= 1/beta = {1 / self.constants.beta:.4g}")
        if self.eps <= 0 or self.interval < 1:
            raise ValueError(f"eps must be > 0 and interval I >= 1, got {self.eps}, {self.interval}")
        cuts = tuple(self.allowed_cuts) or tuple(range(1, self.profile.num_layers + 1))
        if any(not 1 <= c <= self.profile.num_layers for c in cuts):
            raise ValueError(f"allowed_cuts must lie in 1..{self.profile.num_layers}, got {cuts}")
        object.__setattr__(self, "allowed_cuts", tuple(sorted(set(cuts))))

    @property
    def num_devices(self) -> int:
        return self.devices.num_devices


@dataclass
class Decision:
    """Batch sizes ``b [N]`` (int >= 1), cut layers ``cuts [N]`` (1..L), the predicted total latency ``theta``
    (s, eq. 42), and solver information."""

    b: np.ndarray
    cuts: np.ndarray
    theta: float
    info: dict = field(default_factory=dict)


def check_problem(problem) -> Problem:
    """``problem`` if it is a :class:`Problem`, else a ``ParameterTypeError`` naming ``problem``."""
    return check_instance("problem", problem, Problem, "a fedlib.hasfl.Problem")


def check_cuts(problem: Problem, cuts, name: str = "cuts") -> np.ndarray:
    """``cuts`` (``[..., N]``) as an int64 array of cut layers in 1..L, else an error naming ``name``."""
    return check_array(name, cuts, low=1, high=problem.profile.num_layers, integer=True)


def eps_with_slack(constants: HasflConstants, gamma: float, interval: int, num_devices: int,
                   slack: float) -> float:
    """ε = (1 + slack)·floor(b_i = 64 ∀i, L_c = 1): a target just above the smallest floor Theorem 1 allows
    at the shallowest cut (see the module docstring). Raises ``ValueError`` for slack <= 0."""
    check_float("slack", slack, 0, low_open=True)
    check_int("num_devices", num_devices, 1)
    return float((1 + slack) * bound_floor(constants, gamma, np.full(num_devices, 64.0), 1, interval))


def theta(problem: Problem, b, cuts) -> np.ndarray:
    """Θ(b, μ) of eq. (42): 2ϑ(T_S + T_A/I) / (γ(ε − floor)), in seconds, for ``[..., N]`` decisions.

    ``inf`` where a decision is infeasible: memory C4 violated on some device, a cut outside
    ``allowed_cuts``, or ε at or below the bound's floor (C1 unreachable).
    """
    p, c = check_problem(problem), problem.constants
    b = np.asarray(b, dtype=float)
    cuts = np.asarray(cuts)
    lat = round_latency(p.profile, b, cuts, p.devices, p.servers)
    den = p.gamma * (p.eps - bound_floor(c, p.gamma, b, cuts.max(-1), p.interval))
    val = 2 * c.vartheta * (lat["T_S"] + lat["T_A"] / p.interval) / np.where(den > 0, den, np.nan)
    ok = (den > 0) & (memory_bits(p.profile, b, cuts) < p.devices.memory_bits).all(-1)
    ok &= np.isin(cuts, p.allowed_cuts).all(-1)
    if p.max_batch is not None:
        ok &= (b <= p.max_batch).all(-1)
    return np.where(ok, val, np.inf)


def feasible_cuts(problem: Problem, b) -> np.ndarray:
    """``[N, L]`` bool: cut j is allowed for device i and satisfies memory C4 at batch size b_i (``b``: ``[N]``, or
    one batch size for every device).

    Raises:
        ValueError: some device has no feasible cut (names the device and its memory).
    """
    p = check_problem(problem)
    L = p.profile.num_layers
    b = check_array("b", b, low=1, allow_inf=True)
    if b.size not in (1, p.num_devices):
        raise ValueError(f"b must be one batch size or one per device (N = {p.num_devices}), got shape {b.shape}")
    b = np.broadcast_to(b.reshape(-1), (p.num_devices,)).reshape(-1, 1)
    cuts = np.arange(1, L + 1)[None, :]
    ok = memory_bits(p.profile, b, np.broadcast_to(cuts, (len(b), L))) < p.devices.memory_bits[:, None]
    ok &= np.isin(cuts, p.allowed_cuts)
    bad = np.flatnonzero(~ok.any(1))
    if len(bad):
        i = int(bad[0])
        raise ValueError(f"memory constraint C4: device {i} (memory {p.devices.memory_bits[i] / 8e6:.1f} MB) fits no "
                         f"allowed cut at batch size {int(b[i, 0])}")
    return ok


def aux_variables(problem: Problem, b, cuts) -> dict:
    """The tightest T1..T6 of (44) for a decision: T1 = max G̃²_{L_i}, T2 = max δ_{L_i}, T3 = max(T_F + T_aU),
    T4 = max(T_gD + T_B), T5 = max(max T_cU, T_sU), T6 = max(max T_cD, T_sD)."""
    p = check_problem(problem)
    lat = round_latency(p.profile, b, cuts, p.devices, p.servers)
    k = np.asarray(cuts) - 1
    return {"T1": float(p.constants.G2_cum[k].max()), "T2": float(p.profile.param_bits[k].max()),
            "T3": float((lat["T_F"] + lat["T_aU"]).max()), "T4": float((lat["T_gD"] + lat["T_B"]).max()),
            "T5": float(max(lat["T_cU"].max(), lat["T_sU"])), "T6": float(max(lat["T_cD"].max(), lat["T_sD"]))}


def admissible_cuts(problem: Problem, b) -> np.ndarray:
    """``[N, L]`` bool: cut j satisfies memory C4 for device i at b_i and keeps ε reachable with L_c = j
    (the bound's floor at these batch sizes is below ε).

    Raises:
        ValueError: C4 unsatisfiable on a device, or no cut keeps ε reachable (C1), naming the floor.
    """
    p = check_problem(problem)
    ok = feasible_cuts(problem, b)
    b = np.broadcast_to(np.asarray(b, dtype=float), (p.num_devices,))
    floors = np.array([bound_floor(p.constants, p.gamma, b, j, p.interval) for j in range(1, p.profile.num_layers + 1)])
    ok = ok & (floors < p.eps)[None, :]
    if not ok.any(1).all():
        raise ValueError(f"convergence constraint C1: eps = {p.eps:.4g} is below the bound's floor "
                         f"{floors.min():.4g} for every memory-feasible cut at these batch sizes")
    return ok


def initial_cuts(problem: Problem, b) -> np.ndarray:
    """The BCD start (see the module docstring): each device's admissible cut (:func:`admissible_cuts`) with the
    smallest per-sample device time (ρ_j + ϖ_j)/f_i + ψ_j/r_i^U + χ_j/r_i^D."""
    p = check_problem(problem)
    ok = admissible_cuts(problem, b)
    prof, dev = p.profile, p.devices
    t = ((prof.fwd_flops + prof.bwd_flops)[None, :] / dev.flops[:, None]
         + prof.act_bits[None, :] / dev.rate_up[:, None] + prof.grad_bits[None, :] / dev.rate_down[:, None])
    return np.argmin(np.where(ok, t, np.inf), axis=1).astype(np.int64) + 1


def batch_caps(problem: Problem, cuts) -> np.ndarray:
    """The largest integer batch size each device may use at its cut: memory C4 (strict, exactly as
    :func:`theta` checks it: b·(ψ̃ + χ̃) + ϑ̃ + δ < υ) and ``max_batch``; 0 where even b = 1 does not fit.

    Args:
        cuts: ``[..., N]`` cut layers in 1..L.

    Returns:
        ``[..., N]`` int64 (no tolerance: the integer bound is checked with the same arithmetic as C4).
    """
    p = check_problem(problem)
    k = check_cuts(p, cuts) - 1
    per = p.profile.act_bits_cum[k] + p.profile.grad_bits_cum[k]
    fixed = p.profile.opt_state_bits[k] + p.profile.param_bits[k]
    mem = p.devices.memory_bits
    cap = np.floor(np.maximum(mem - fixed, 0) / per)
    cap = np.where(cap * per + fixed >= mem, cap - 1, cap)           # floor landed on the bound: strict C4
    cap = np.where((cap + 1) * per + fixed < mem, cap + 1, cap)      # floor rounded down one too many
    cap = np.maximum(cap, 0).astype(np.int64)
    return cap if p.max_batch is None else np.minimum(cap, int(p.max_batch))


def common_cut_floors(problem: Problem) -> dict[int, float]:
    """For each allowed common cut L_c that some decision can have: the smallest floor of Theorem 1 over
    decisions whose cuts are <= L_c (every device at its largest memory-feasible batch size among those cuts).

    Raises:
        ValueError: one error for the whole problem, naming the binding constraint: memory C4 (the device and its
            memory, when it fits no allowed cut even at b = 1) or convergence C1 (ε and the smallest floor).
    """
    p = check_problem(problem)
    cuts = np.asarray(p.allowed_cuts)
    caps = batch_caps(p, np.broadcast_to(cuts[:, None], (len(cuts), p.num_devices)))   # [cuts, N]
    bad = np.flatnonzero((caps < 1).all(0))
    if len(bad):
        i = int(bad[0])
        raise ValueError(f"memory constraint C4: device {i} (memory {p.devices.memory_bits[i] / 8e6:.1f} MB) fits "
                         f"no allowed cut {tuple(int(c) for c in cuts)} even at batch size 1")
    best = np.maximum.accumulate(caps, axis=0)          # largest batch over cuts <= L_c, per device
    floors = {}
    for j, lc in enumerate(cuts):
        if (best[j] >= 1).all():
            floors[int(lc)] = float(bound_floor(p.constants, p.gamma, best[j].astype(float), lc, p.interval))
    reachable = {lc: f for lc, f in floors.items() if f < p.eps}
    if not reachable:
        lc, f = min(floors.items(), key=lambda kv: kv[1])
        raise ValueError(f"convergence constraint C1: eps = {p.eps:.6g} is at or below the bound's smallest floor "
                         f"{f:.6g} (common cut L_c = {lc}, every device at its largest memory-feasible batch size"
                         f"{'' if p.max_batch is None else f' <= max_batch = {p.max_batch}'}): no decision exists")
    return reachable
