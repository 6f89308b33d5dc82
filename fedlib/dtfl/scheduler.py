"""DTFL's dynamic tier scheduler (Sec. 3.3, Algorithm 1 lines 21-35), the clients' changing resources and the
round-by-round simulation of the system (tiers, times, straggler) that the training runs follow.

Scheduler (:class:`TierScheduler`): per client and tier an exponential moving average of the observed
client-side training time, T̄_k(m) <- α·T_obs + (1 - α)·T̄_k(m) (first observation: T̄ = T_obs; **choice** α = 2/3,
the authors' code's ``ewm(span=2)`` written as the recursive EMA). Estimates for tier m' from the client's current
tier m: T̂_c(m') = T^{c_p}(m')/T^{c_p}(m) · T̄_k(m) (T^{c_p}: profiled per-sample client FLOPs, Table 2's
ratios), T̂_com(m') from the tier's real tensor sizes, the client's link speed and N_k, T̂_s(m') = profiled server
time (:class:`fedlib.dtfl.TimeModel`), T̂ = max(T̂_c + T̂_com, T̂_s + T̂_com) (eq. 5). Assignment:
T_max = max_k min_m T̂_k(m), each client the largest tier m with T̂_k(m) <= T_max (least offloading). Before a
client's first observation (**choice**) it runs ``initial_tier`` (default M, no offloading beyond the paper's
largest tier). ``min_tier`` (default 1) is the lowest tier the scheduler may assign. The authors' code
(mahmoudsajjadi/DTFL) never schedules the md1-only tier and starts every client at md1..md2: with M = 7 that is
``min_tier = 2, initial_tier = 2`` (``SCHEDULERS["authors"]``).

Dynamics (:func:`profile_schedule`, ``system`` seed stream): clients start balanced over the profile set (20 % each
for Sec. 4.1's five profiles), then every ``change_every`` rounds a fraction ``change_frac`` of them (Sec. 4.1:
30 % every 50 rounds; Fig. 3: all, every 20 rounds, **our reading** of "clients' CPU profiles randomly switch") move
to a different profile drawn uniformly from the set. Observed client compute times carry multiplicative noise
exp(σ·ε), ε ~ N(0, 1) (**choice**: σ = ``noise``, default 0.05, the spread of Table 2), from the same stream; the
round's real time uses the noisy value.

A scheduler of your own: a :class:`TierScheduler` subclass, given to :func:`simulate` as the class or by import
path ``"package.module:Class"`` (:mod:`fedlib.core.components`).
"""
from __future__ import annotations

import numpy as np

from ..core.components import call, check_output, resolve
from ..core.validate import ParameterTypeError, check_float, check_int, check_mask, check_per_client
from .timing import ResourceProfile, TimeModel

EMA_ALPHA = 2 / 3

#: the parameters a tier scheduler of your own takes (a :class:`TierScheduler` subclass): its construction,
#: ``assign()`` and ``observe()``, each bound before it runs (:func:`fedlib.core.components.call`)
SCHEDULER_PARAMS = "(time_model, num_clients, alpha, initial_tier, min_tier)"
ASSIGN_PARAMS = "(mbps, samples, mask)"
OBSERVE_PARAMS = "(tiers, client_s, mask)"
#: the scheduler as the authors' code runs it (M = 7): never tier 1 (md1 only), every client starts at tier 2
#: (md1..md2); ours: every tier allowed, clients start at tier M
SCHEDULERS = {"ours": {"min_tier": 1, "initial_tier": None}, "authors": {"min_tier": 2, "initial_tier": 2}}


def profile_schedule(num_clients: int, rounds: int, num_profiles: int, change_every: int, change_frac: float,
                     rng: np.random.Generator) -> np.ndarray:
    """Profile index of every client in every round, ``[rounds, K]`` ints in 0..P-1 (module docstring).

    Args:
        num_clients: K >= 1. rounds: R >= 1. num_profiles: P >= 1. change_every: rounds between changes
            (0 = never; the first change happens before round ``change_every + 1``). change_frac: fraction of the
            clients that change, in [0, 1] (rounded to the nearest count). rng: the ``system`` stream.

    Raises:
        ValueError / ParameterTypeError: a value outside its range (naming it).
    """
    k = check_int("num_clients", num_clients, 1)
    r = check_int("rounds", rounds, 1)
    p = check_int("num_profiles", num_profiles, 1)
    every = check_int("change_every", change_every, 0)
    frac = check_float("change_frac", change_frac, 0, 1)
    if not isinstance(rng, np.random.Generator):
        raise ParameterTypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    cur = rng.permutation(np.arange(k) % p)
    out = np.empty((r, k), dtype=np.int64)
    for t in range(r):
        if every and t and t % every == 0 and p > 1:
            for i in rng.choice(k, size=int(round(frac * k)), replace=False):
                others = [q for q in range(p) if q != cur[i]]
                cur[i] = others[rng.integers(len(others))]
        out[t] = cur
    return out


class TierScheduler:
    """TierScheduler(·) of Algorithm 1 for K clients and the M tiers of ``time_model`` (module docstring).

    Args:
        time_model: :class:`fedlib.dtfl.TimeModel` (profiled ratios, tensor sizes, server speed).
        num_clients: K >= 1. alpha: EMA weight of a new observation, in (0, 1]. initial_tier: tier before a
            client's first observation, min_tier..M (default M). min_tier: the lowest tier assigned, 1..M
            (default 1; the authors' code: 2).

    Raises:
        ValueError / ParameterTypeError: a value outside its range (naming it).
    """

    def __init__(self, time_model: TimeModel, num_clients: int, alpha: float = EMA_ALPHA,
                 initial_tier: int | None = None, min_tier: int = 1):
        if not isinstance(time_model, TimeModel):
            raise ParameterTypeError(f"time_model must be a TimeModel, got {type(time_model).__name__}")
        self.tm, self.m = time_model, time_model.costs.num_tiers
        self.k = check_int("num_clients", num_clients, 1)
        self.alpha = check_float("alpha", alpha, 0, 1, low_open=True)
        self.min_tier = check_int("min_tier", min_tier, 1, self.m, extra=f" (tiers of M = {self.m})")
        self.initial_tier = check_int("initial_tier", self.m if initial_tier is None else initial_tier,
                                      self.min_tier, self.m, extra=f" (min_tier..M = {self.min_tier}..{self.m})")
        self.ema = np.full((self.k, self.m), np.nan)     # T̄_k(m), seconds per round
        self.current = np.full(self.k, self.initial_tier)

    def observe(self, tiers, client_s, mask=None) -> None:
        """Add one round's observed client-side training times (``client_s [K]``, seconds, > 0) of clients in
        ``tiers [K]`` (1..M) to the EMAs; with ``mask`` (``[K]`` bools: the round's participants) only those.

        Raises:
            ValueError: shapes, tiers outside 1..M, times not finite > 0.
        """
        tiers, t = np.asarray(tiers), np.asarray(client_s)
        for name, v in (("tiers", tiers), ("client_s", t)):
            if v.shape != (self.k,):
                raise ValueError(f"{name} must hold one entry per client: K = {self.k} entries, got shape {v.shape}")
        if not np.issubdtype(t.dtype, np.number) or t.dtype == bool:
            raise ParameterTypeError(f"client_s must be K = {self.k} times in seconds, got {t.dtype} entries")
        t = t.astype(float)
        if mask is not None:      # entries of clients outside the mask are not read
            mask = check_mask("mask", mask, self.k)
            tiers = np.where(mask, tiers, self.current)
            t = np.where(mask, t, 1.0)
        if not np.issubdtype(tiers.dtype, np.integer) or np.any(tiers < 1) or np.any(tiers > self.m):
            raise ValueError(f"tiers must be integers in 1..M = 1..{self.m}, got {tiers.tolist()}")
        if not np.all(np.isfinite(t)) or np.any(t <= 0):
            raise ValueError(f"client_s must be finite times > 0, got {t.tolist()}")
        idx = (np.arange(self.k), tiers - 1)
        old = self.ema[idx]
        new = np.where(np.isnan(old), t, self.alpha * t + (1 - self.alpha) * old)
        self.ema[idx] = new if mask is None else np.where(mask, new, old)
        self.current = tiers.astype(np.int64)

    def estimate(self, mbps, samples) -> np.ndarray:
        """T̂_k(m) for every client and tier, ``[K, M]`` seconds (eq. 5 with the EMA-scaled client time);
        NaN for clients without an observation yet.

        Args:
            mbps: ``[K]`` current link speeds (Mbit/s), or one for all. samples: ``[K]`` N_k, or one for all.

        Raises:
            ValueError / ParameterTypeError: mbps or samples neither one number nor K numbers (naming them and
                K), not > 0 (samples: >= 1).
        """
        mbps = check_per_client("mbps", mbps, self.k, allow_scalar=True, low=0, low_open=True)
        n = check_per_client("samples", samples, self.k, allow_scalar=True, low=1)
        tiers = np.broadcast_to(np.arange(1, self.m + 1)[:, None], (self.m, self.k))
        prof = self.tm.times(tiers, 1.0, mbps, n)                           # [M, K]; cpus cancel in the ratios
        ratio = self.tm.costs.client_flops[:, None] / self.tm.costs.client_flops[self.current - 1][None, :]
        t_c = ratio * self.ema[np.arange(self.k), self.current - 1][None, :]
        return np.maximum(t_c + prof["T_com"], prof["T_s"] + prof["T_com"]).T

    def assign(self, mbps, samples, mask=None) -> np.ndarray:
        """Tiers for the next round, ``[K]`` ints in 1..M: T_max = max_k min_m T̂_k(m), then for each client the
        largest m with T̂_k(m) <= T_max (Algorithm 1 lines 31-33), over the tiers min_tier..M only; clients never
        observed get ``initial_tier``.
        With ``mask`` (``[K]`` bools, the round's participants) T_max is taken over the participants and the
        others keep their current tier.

        Raises:
            ValueError / ParameterTypeError: as :meth:`estimate`; mask not K bools.
        """
        here = np.ones(self.k, dtype=bool) if mask is None else check_mask("mask", mask, self.k)
        est = self.estimate(mbps, samples)
        seen = ~np.isnan(est[:, 0]) & here
        out = np.where(here, self.initial_tier, self.current).astype(np.int64)
        if seen.any():
            allowed = est[seen][:, self.min_tier - 1:]                      # tiers min_tier..M
            t_max = allowed.min(axis=1).max()
            ok = allowed <= t_max * (1 + 1e-12)
            out[seen] = self.m - np.argmax(ok[:, ::-1], axis=1)
        return out


def sample_participants(num_clients: int, rounds: int, fraction: float, rng: np.random.Generator) -> np.ndarray:
    """The clients sampled in each round (Table 4: 10 % of the clients), ``[rounds, K]`` bools: max(1,
    round(fraction·K)) clients per round, uniformly without replacement, from ``rng`` (the ``system`` stream).

    Raises:
        ValueError / ParameterTypeError: num_clients / rounds < 1, fraction outside (0, 1] (naming them).
    """
    k = check_int("num_clients", num_clients, 1)
    r = check_int("rounds", rounds, 1)
    frac = check_float("fraction", fraction, 0, 1, low_open=True)
    if not isinstance(rng, np.random.Generator):
        raise ParameterTypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    n = max(1, int(round(frac * k)))
    out = np.zeros((r, k), dtype=bool)
    for t in range(r):
        out[t, rng.choice(k, size=n, replace=False)] = True
    return out


def check_system(profiles: tuple, profile_idx, samples, rng, noise: float, participants) -> dict:
    """Checked inputs of a system simulation (:func:`simulate`, :func:`fedlib.dtfl.simulate_method`):
    ``profile_idx`` ``[R, K]``, ``samples`` ``[K]``, ``noise``, ``participants`` ``[R, K]`` bools (all when None)
    and each client's ``cpus`` / ``mbps`` per round ``[R, K]``.

    Raises:
        ValueError / ParameterTypeError: profiles not ResourceProfiles, profile_idx not an [R, K] array of indices
            into them, samples not of length K, noise < 0, rng not a Generator, participants not [R, K] bools with
            one per round (naming them).
    """
    if not profiles or not all(isinstance(p, ResourceProfile) for p in profiles):
        raise ParameterTypeError(f"profiles must be a non-empty tuple of ResourceProfile, got {profiles!r}")
    idx = np.asarray(profile_idx)
    if idx.ndim != 2 or idx.size == 0 or not np.issubdtype(idx.dtype, np.integer) or idx.min() < 0 \
            or idx.max() >= len(profiles):
        raise ValueError(f"profile_idx must be an [R, K] integer array of indices into the {len(profiles)} profiles")
    rounds, k = idx.shape
    n = np.asarray(check_per_client("samples", samples, k, low=1))
    noise = check_float("noise", noise, 0)
    if not isinstance(rng, np.random.Generator):
        raise ParameterTypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    part = np.ones((rounds, k), dtype=bool) if participants is None else np.asarray(participants)
    if part.shape != (rounds, k) or part.dtype != bool or not part.any(axis=1).all():
        raise ValueError(f"participants must be an [R = {rounds}, K = {k}] bool array with a participant in "
                         f"every round")
    return {"profile_idx": idx, "samples": n, "noise": noise, "participants": part,
            "cpus": np.array([p.cpus for p in profiles])[idx], "mbps": np.array([p.mbps for p in profiles])[idx]}


def simulate(time_model: TimeModel, profiles: tuple, profile_idx, samples, rng: np.random.Generator,
             fixed_tier: int | None = None, noise: float = 0.05, alpha: float = EMA_ALPHA,
             initial_tier: int | None = None, participants=None, min_tier: int = 1, scheduler=None) -> dict:
    """Run the system for ``R`` rounds: tiers (fixed, or DTFL's scheduler), each client's times and the round's
    straggler, without training (the times do not depend on the weights).

    Args:
        time_model: eq. 5. profiles: the :class:`ResourceProfile` set. profile_idx: ``[R, K]`` indices into
            ``profiles`` (:func:`profile_schedule`). samples: ``[K]`` N_k (>= 1). rng: ``system`` stream (noise).
        fixed_tier: every client in this tier (Table 1) instead of the scheduler. noise: σ >= 0 of the observed
            client times. alpha, initial_tier, min_tier: :class:`TierScheduler`. participants: ``[R, K]`` bools, the
            clients sampled in each round (None = all): only they are scheduled, observed and timed; the round's
            straggler is the slowest participant (the others' times are still drawn, so the noise stream does
            not depend on the sample). scheduler: a :class:`TierScheduler` subclass or its import path (None: ours),
            built with (time_model, K, alpha, initial_tier, min_tier); its ``assign`` gives ``[K]`` tiers.

    Returns:
        ``tiers``, ``T_c``, ``T_s``, ``T_com``, ``T`` (``[R, K]``; T_c with noise), ``round_s`` ``[R]`` (max_k T,
        the straggler's), ``straggler`` ``[R]``, ``comp_s`` / ``comm_s`` ``[R]`` (the straggler's max(T_c, T_s)
        and T_com; they add up to ``round_s``), ``cuts`` ``[R, K]`` (modules on each client). Lists, JSON-ready.

    Raises:
        ValueError / ParameterTypeError: bad shapes, indices, tier, noise or scheduler (naming them).
    """
    run = SystemRun(time_model, profiles, profile_idx, samples, rng, fixed_tier, noise, alpha, initial_tier,
                    participants, min_tier, scheduler)
    for r in range(1, run.rounds + 1):
        run.tiers(r)
        run.observe(r)
    return run.result()


class SystemRun:
    """The system of :func:`simulate` one round at a time, Algorithm 1's ``schedule``
    (:func:`fedlib.dtfl.run.algorithm1`): :meth:`tiers` gives round r's ``(cuts [K], participants [K])`` (fixed,
    or the scheduler's assignment), :meth:`observe` draws its client times and feeds them to the scheduler,
    :meth:`result` is :func:`simulate`'s dict. Arguments and errors as :func:`simulate`; rounds in order."""

    def __init__(self, time_model: TimeModel, profiles: tuple, profile_idx, samples, rng: np.random.Generator,
                 fixed_tier: int | None = None, noise: float = 0.05, alpha: float = EMA_ALPHA,
                 initial_tier: int | None = None, participants=None, min_tier: int = 1, scheduler=None):
        if not isinstance(time_model, TimeModel):
            raise ParameterTypeError(f"time_model must be a TimeModel, got {type(time_model).__name__}")
        factory = TierScheduler if scheduler is None else resolve(scheduler, "scheduler")
        self.name = scheduler if isinstance(scheduler, str) else factory.__qualname__
        sys = check_system(profiles, profile_idx, samples, rng, noise, participants)
        self.tm, self.rng = time_model, rng
        self.n, self.noise, self.part, self.cpus, self.mbps = (sys[key] for key in (
            "samples", "noise", "participants", "cpus", "mbps"))
        self.rounds, self.k = sys["profile_idx"].shape
        if fixed_tier is not None:
            check_int("fixed_tier", fixed_tier, 1, time_model.costs.num_tiers)
        self.fixed_tier = fixed_tier
        self.min_tier = check_int("min_tier", min_tier, 1, time_model.costs.num_tiers)
        if scheduler is None:
            self.sched = factory(time_model, self.k, alpha, initial_tier, min_tier)
        else:                                             # yours: its signature bound first, its errors named
            self.sched = call(factory, f"scheduler {self.name!r}", SCHEDULER_PARAMS, time_model, self.k, alpha,
                              initial_tier, min_tier)
        self.own = scheduler is not None
        missing = [a for a in ("observe", "assign", "initial_tier", "current") if not hasattr(self.sched, a)]
        if missing:
            raise ParameterTypeError(f"scheduler {self.name} lacks {missing}: subclass fedlib.dtfl.TierScheduler")
        self.out = {key: np.zeros((self.rounds, self.k)) for key in ("tiers", "T_c", "T_s", "T_com", "T")}

    def first_cuts(self) -> np.ndarray:
        """Round 1's cuts ``[K]`` without consuming the round (the training state is built at them)."""
        tiers = (np.full(self.k, self.fixed_tier) if self.fixed_tier is not None else
                 np.where(self.part[0], self.sched.initial_tier, self.sched.current))
        return self.tm.costs.cuts[tiers - 1]

    def tiers(self, r: int) -> tuple:
        """Round r's tiers as ``(cuts [K], participants [K])``: Algorithm 1 lines 21-35 (:class:`TierScheduler`)."""
        here = self.part[r - 1]
        if self.fixed_tier is not None:
            tiers = np.full(self.k, self.fixed_tier)
        else:
            who = f"scheduler {self.name!r}'s assign() in round {r}"
            args = (self.mbps[r - 1], self.n, here)
            assigned = call(self.sched.assign, who, ASSIGN_PARAMS, *args) if self.own else self.sched.assign(*args)
            tiers = check_output(who, "tiers", assigned, self.k, self.min_tier, self.tm.costs.num_tiers)
        self.out["tiers"][r - 1] = tiers
        return self.tm.costs.cuts[tiers.astype(np.int64) - 1], here

    def observe(self, r: int) -> None:
        """Round r's times (eq. 5; T_c with its noise) and the scheduler's EMA update (lines 22-23)."""
        i, tiers = r - 1, self.out["tiers"][r - 1].astype(np.int64)
        t = self.tm.times(tiers, self.cpus[i], self.mbps[i], self.n)
        t_c = t["T_c"] * np.exp(self.noise * self.rng.standard_normal(self.k))
        if self.own:
            call(self.sched.observe, f"scheduler {self.name!r}'s observe() in round {r}", OBSERVE_PARAMS, tiers, t_c,
                 self.part[i])
        else:
            self.sched.observe(tiers, t_c, self.part[i])
        self.out["T_c"][i], self.out["T_s"][i], self.out["T_com"][i] = t_c, t["T_s"], t["T_com"]
        self.out["T"][i] = np.maximum(t_c + t["T_com"], t["T_s"] + t["T_com"])

    def result(self) -> dict:
        """:func:`simulate`'s dict of the rounds so far (all of them after round R)."""
        out, part, rounds = self.out, self.part, self.rounds
        strag = np.where(part, out["T"], -np.inf).argmax(1)
        rows = np.arange(rounds)
        tiers = out["tiers"].astype(np.int64)
        res = {key: out[key].tolist() for key in ("T_c", "T_s", "T_com", "T")}
        res.update(tiers=tiers.tolist(), cuts=self.tm.costs.cuts[tiers - 1].tolist(),
                   round_s=out["T"][rows, strag].tolist(), straggler=strag.tolist(),
                   comp_s=np.maximum(out["T_c"], out["T_s"])[rows, strag].tolist(),
                   comm_s=out["T_com"][rows, strag].tolist())
        return res
