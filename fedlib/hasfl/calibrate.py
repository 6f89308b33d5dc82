"""A calibrated estimator of HASFL's bound (ours; issue #9): the split term's scale κ and the target ε fitted to
measured rounds-to-target of fixed-cut training runs.

**This estimator is ours: the paper has none.** It estimates β, σ_j², G_j² and ϑ from training and plugs them
into Corollary 1 (spec ``shared/spec/hasfl.md``). With the pilot estimates (:func:`fedlib.hasfl.training.
bound_constants`), the bound predicts that deeper cuts need far more rounds than training measures (quick
profile: 4× more rounds at cut 13 than at cut 8 predicted, 1.09× measured), so the optimiser puts every device at
cut 1, whose rounds are the costliest. Here the bound's *shape* is kept (R ∝ 1/(ε − floor), Corollary 1) and
only two numbers are fitted:

- Corollary 1 for a run at common cut c with every device at batch size b, solved for ε at R = R_c rounds:

      2ϑ / (γ R_c) = ε − v(b) − κ·s(c),
      v(b) = βγ Σ_i Σ_j σ_j² / (b_i N²)           (the variance term, estimated constants, unchanged),
      s(c) = 1{I>1}·4β²γ²I² Σ_{j<=c} G_j²         (the split term with the estimated G_j²),

  where κ >= 0 scales the split term (equivalently every G_j²). Given measured R_c at several cuts (same b),
  y_c = 2ϑ/(γR_c) + v(b) = ε − κ·s(c) is linear in (ε, κ); we fit it by non-negative least squares
  (``scipy.optimize.nnls``: ε >= 0, κ >= 0; κ = 0 when the data say deeper cuts are faster).
- The calibrated problem keeps β, σ_j², ϑ, scales G_j² by κ (:func:`calibrated_constants`) and uses the fitted
  ε as C1's target, so Corollary 1 reproduces the measured rounds at the fitted cuts.

What it is calibrated on (:func:`fedlib.hasfl.train_plan.plan_calibration`): the IID fixed-cut runs of Figs. 3a /
11 (every device at b = ``fixed_batch``, cuts ``cut_grid``), first model, ``num_devices`` devices, the same seed,
rounds to the IID target accuracy; runs that never reach the target are left out. The same (ε, κ) are applied to
both data settings (IID and non-IID), to every N of Fig. 9 and to the other models of Fig. 5 (their own pilot
constants, G_j² scaled by the same κ). Units: ε in the bound's units (squared gradient norm, as Theorem 1's
left-hand side), κ dimensionless, rounds in training rounds.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy.optimize import nnls

from ..core.validate import ParameterTypeError, check_float, check_int, check_list
from .theory import HasflConstants, _floor_terms


@dataclass(frozen=True)
class CalibrationFit:
    """A fit of :func:`fit_calibration`.

    Attributes:
        eps: fitted ε (>= 0, the bound's units). kappa: fitted κ (>= 0) on the split term / G_j².
        cuts, rounds, rounds_fit: the points used (cuts that reached the target, measured rounds, Corollary 1's
            unrounded rounds under the fit; ``None`` where the fitted ε is at or below that cut's fitted floor).
        dropped: cuts whose runs never reached the target (left out). residual: ‖A x − y‖ / ‖y‖ of the linear
        system (relative, in the units of y = 2ϑ/(γR) + v).
    """

    eps: float
    kappa: float
    cuts: tuple
    rounds: tuple
    rounds_fit: tuple
    dropped: tuple
    residual: float

    def to_dict(self) -> dict:
        return {"eps": self.eps, "kappa": self.kappa, "cuts": list(self.cuts), "rounds": list(self.rounds),
                "rounds_fit": list(self.rounds_fit), "dropped": list(self.dropped), "residual": self.residual}


def calibrated_constants(constants: HasflConstants, kappa: float) -> HasflConstants:
    """The constants with every G_j² scaled by κ (so the split term of Theorem 1 is scaled by κ); β, σ_j², ϑ
    unchanged.

    Raises:
        ParameterTypeError: ``constants`` not :class:`HasflConstants`. ValueError: κ not a finite number >= 0.
    """
    if not isinstance(constants, HasflConstants):
        raise ParameterTypeError(f"constants must be HasflConstants, got {type(constants).__name__}")
    check_float("kappa", kappa, 0)
    return replace(constants, G2=constants.G2 * float(kappa))


def fitted_rounds(constants: HasflConstants, gamma: float, b, cut: int, interval: int, eps: float) -> float | None:
    """Corollary 1's rounds to ε, unrounded: 2ϑ / (γ(ε − floor)) for batch sizes ``b`` (``[N]``) at common cut
    ``cut``; ``None`` when ε is at or below the floor (the bound predicts the target is never reached). Unlike
    :func:`fedlib.hasfl.rounds_needed` (integer R, raises when unreachable) it is meant for comparing fits.

    Raises:
        ValueError: ε NaN, inf or < 0; γ outside (0, 1/β], I < 1, b < 1 or a cut outside 1..L (as
            :func:`fedlib.hasfl.bound_floor`)."""
    check_float("eps", eps, 0)
    variance, split = _floor_terms(constants, gamma, b, cut, interval)
    gap = eps - float(variance + split)
    return 2 * constants.vartheta / (gamma * gap) if gap > 0 else None


def fit_calibration(constants: HasflConstants, gamma: float, interval: int, num_devices: int, batch: int,
                    cuts, rounds, target_acc: float | None = None) -> CalibrationFit:
    """Fit (ε, κ) of ``2ϑ/(γR_c) + v(b) = ε − κ·s(c)`` (module docstring) by non-negative least squares.

    Args:
        constants: the estimated (pilot) constants, whose G_j² κ scales. gamma: γ of the bound (0 < γ <= 1/β).
        interval: I (>= 1). num_devices: N (>= 1). batch: b of every device in the runs (>= 1).
        cuts: ``[K]`` common cut of each run (integers in 1..L; a cut may repeat, e.g. one run per seed).
        rounds: ``[K]`` measured rounds to the target of each run (> 0), ``None`` for a run that never reached it
            (left out). target_acc: the target accuracy, only for messages.

    Raises:
        ValueError: fewer than 2 distinct cuts reached the target (naming the cuts and the target); NaN, inf or
            non-positive ``rounds``; ``cuts`` and ``rounds`` of different lengths; cuts outside 1..L; the split
            term is 0 at every cut (I = 1 or G² = 0: κ cannot be identified). ParameterTypeError: wrong types.
    """
    if not isinstance(constants, HasflConstants):
        raise ParameterTypeError(f"constants must be HasflConstants, got {type(constants).__name__}")
    cuts = check_list("cuts", cuts, lambda n, v: check_int(n, v, 1, len(constants.G2)))
    rounds = check_list("rounds", rounds, lambda n, v: v if v is None else check_float(n, v, 0, low_open=True))  # None: not reached
    if len(cuts) != len(rounds):
        raise ValueError(f"cuts and rounds must have the same length, got {len(cuts)} cuts and {len(rounds)} rounds")
    check_int("num_devices", num_devices, 1)
    check_int("batch", batch, 1)
    used = [(c, r) for c, r in zip(cuts, rounds) if r is not None]
    dropped = tuple(c for c, r in zip(cuts, rounds) if r is None)
    if len({c for c, _ in used}) < 2:
        target = "the target" if target_acc is None else f"the target {target_acc:g}"
        raise ValueError(f"calibration needs runs at >= 2 distinct cuts that reach {target}; of cuts {cuts}, only "
                         f"{sorted({c for c, _ in used})} reached it (not reached: {sorted(set(dropped))})")
    b = np.full(num_devices, float(batch))
    variance = float(_floor_terms(constants, gamma, b, 1, interval)[0])
    split = np.array([float(_floor_terms(constants, gamma, b, c, interval)[1]) for c, _ in used])
    if not split.max() > 0:
        raise ValueError(f"the split term is 0 at every cut (interval I = {interval}, or G2 = 0): kappa cannot be "
                         "fitted")
    y = np.array([2 * constants.vartheta / (gamma * r) for _, r in used]) + variance
    scale = split.max()                                  # columns of similar size for nnls
    a = np.column_stack([np.ones(len(used)), -split / scale])
    (eps, k), res = nnls(a, y)
    kappa = float(k / scale)
    fit_rounds = tuple(fitted_rounds(calibrated_constants(constants, kappa), gamma, b, c, interval, float(eps))
                       for c, _ in used)
    return CalibrationFit(eps=float(eps), kappa=kappa, cuts=tuple(c for c, _ in used),
                          rounds=tuple(float(r) for _, r in used), rounds_fit=fit_rounds, dropped=dropped,
                          residual=float(res / np.linalg.norm(y)))
