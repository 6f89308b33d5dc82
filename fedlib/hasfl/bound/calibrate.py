"""A calibrated estimator of HASFL's bound (ours; issue #9): the target ε, a scale κ on the split term and a scale
λ on the variance term, fitted to the measured rounds-to-target of fixed-cut and fixed-batch training runs.

**This estimator is ours: the paper has none.** It estimates β, σ_j², G_j² and ϑ from training and plugs them
into Corollary 1. With the pilot estimates (:func:`fedlib.lab.hasfl.runs.training.
bound_constants`), the bound predicts that deeper cuts need far more rounds than training measures (quick
profile: 4× more rounds at cut 13 than at cut 8 predicted, 1.09× measured), so the optimiser puts every device at
cut 1, whose rounds are the costliest; and it predicts that the batch size barely matters (the variance term is
tiny next to the split term), while training measures 1.3× more rounds at b = 8 than at b = 16, so once the split
term is scaled down the optimiser picks b = 1, which does not learn. Here the bound's *shape* is kept
(R ∝ 1/(ε − floor), Corollary 1) and only three numbers are fitted:

- Corollary 1 for a run at common cut c with every device at batch size b, solved for ε at R = R_k rounds:

      2ϑ / (γ R_k) = ε − λ·v(b_k) − κ·s(c_k),
      v(b) = βγ Σ_i Σ_j σ_j² / (b_i N²)           (the variance term with the estimated σ_j²),
      s(c) = 1{I>1}·4β²γ²I² Σ_{j<=c} G_j²         (the split term with the estimated G_j²),

  where κ >= 0 scales the split term (equivalently every G_j²) and λ >= 0 the variance term (every σ_j²).
  y_k = 2ϑ/(γR_k) is linear in (ε, λ, κ); we fit it by non-negative least squares (``scipy.optimize.nnls``;
  κ = 0 when the data say deeper cuts are faster, λ = 0 when larger batches are slower). With
  ``fit_variance=False`` λ = 1 (the estimated σ_j² kept) and y_k = 2ϑ/(γR_k) + v(b_k) = ε − κ·s(c_k).
- The calibrated problem keeps β and ϑ, scales G_j² by κ and σ_j² by λ (:func:`calibrated_constants`) and uses
  the fitted ε as C1's target, so Corollary 1 reproduces the measured rounds at the fitted runs.

What it is calibrated on (:func:`fedlib.lab.hasfl.runs.train_plan.plan_calibration`): the IID fixed-cut runs of Figs. 3a /
11 (every device at b = ``fixed_batch``, cuts ``cut_grid``) and the IID fixed-batch runs of Figs. 2a / 10 (every
device at cut ``fixed_cut``, batch sizes ``batch_grid``), first model, ``num_devices`` devices, the same seed,
rounds to the IID target accuracy; runs that never reach the target are left out. The same (ε, κ, λ) are
applied to both data settings (IID and non-IID), to every N of Fig. 9 and to the other models of Fig. 5 (their
own pilot constants, scaled by the same κ and λ). Units: ε in the bound's units (squared gradient norm, as
Theorem 1's left-hand side), κ and λ dimensionless, rounds in training rounds.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy.optimize import nnls

from fedlib.core.validate import ParameterTypeError, check_bool, check_float, check_int, check_list
from fedlib.hasfl.bound.theory import HasflConstants, _floor_terms


@dataclass(frozen=True)
class CalibrationFit:
    """A fit of :func:`fit_calibration`.

    Attributes:
        eps: fitted ε (>= 0, the bound's units). kappa: fitted κ (>= 0) on the split term / G_j². lam: λ (>= 0) on
            the variance term / σ_j² (1.0 when not fitted). fit_variance: whether λ was fitted.
        batches, cuts, rounds, rounds_fit: the runs used (batch size of every device, common cut, measured
            rounds, Corollary 1's unrounded rounds under the fit; ``None`` where the fitted ε is at or below that
            run's fitted floor). dropped: ``(batch, cut)`` of the runs that never reached the target (left out).
        residual: ‖A x − y‖ / ‖y‖ of the linear system (relative, in the units of y).
    """

    eps: float
    kappa: float
    lam: float
    fit_variance: bool
    batches: tuple
    cuts: tuple
    rounds: tuple
    rounds_fit: tuple
    dropped: tuple
    residual: float

    def to_dict(self) -> dict:
        return {"eps": self.eps, "kappa": self.kappa, "lambda": self.lam, "fit_variance": self.fit_variance,
                "batches": list(self.batches), "cuts": list(self.cuts), "rounds": list(self.rounds),
                "rounds_fit": list(self.rounds_fit), "dropped": [list(d) for d in self.dropped],
                "residual": self.residual}


def calibrated_constants(constants: HasflConstants, kappa: float, lam: float = 1.0) -> HasflConstants:
    """The constants with every G_j² scaled by κ (the split term of Theorem 1 scaled by κ) and every σ_j² by λ
    (the variance term scaled by λ); β and ϑ unchanged.

    Raises:
        ParameterTypeError: ``constants`` not :class:`HasflConstants`. ValueError: κ or λ not a finite number >= 0.
    """
    if not isinstance(constants, HasflConstants):
        raise ParameterTypeError(f"constants must be HasflConstants, got {type(constants).__name__}")
    check_float("kappa", kappa, 0)
    check_float("lam", lam, 0)
    return replace(constants, G2=constants.G2 * float(kappa), sigma2=constants.sigma2 * float(lam))


def fitted_rounds(constants: HasflConstants, gamma: float, b, cut: int, interval: int, eps: float) -> float | None:
    """Corollary 1's rounds to ε, unrounded: 2ϑ / (γ(ε − floor)) for batch sizes ``b`` (``[N]``) at common cut
    ``cut``; ``None`` when ε is at or below the floor (the bound predicts the target is never reached). Unlike
    :func:`fedlib.hasfl.rounds_needed` (integer R, raises when unreachable) it is meant for comparing fits.

    Raises:
        ValueError: ε NaN, inf or < 0; γ outside (0, 1/β], I < 1, b < 1 or a cut outside 1..L (as
            :func:`fedlib.hasfl.bound_floor`)."""
    check_float("eps", eps, 0)
    if not isinstance(constants, HasflConstants):
        raise ParameterTypeError(f"constants must be HasflConstants, got {type(constants).__name__}")
    check_int("cut", cut, 1, len(constants.G2))
    variance, split = _floor_terms(constants, gamma, b, cut, interval)
    gap = eps - float(variance + split)
    return 2 * constants.vartheta / (gamma * gap) if gap > 0 else None


def fit_calibration(constants: HasflConstants, gamma: float, interval: int, num_devices: int, batch,
                    cuts, rounds, target_acc: float | None = None, fit_variance: bool = False) -> CalibrationFit:
    """Fit (ε, κ) or, with ``fit_variance``, (ε, κ, λ) of ``2ϑ/(γR_k) = ε − λ·v(b_k) − κ·s(c_k)`` (module
    docstring) by non-negative least squares.

    Args:
        constants: the estimated (pilot) constants, whose G_j² κ and σ_j² λ scale. gamma: γ of the bound
            (0 < γ <= 1/β). interval: I (>= 1). num_devices: N (>= 1).
        batch: b of every device in every run (an integer >= 1), or ``[K]`` (list, tuple or array of integers):
            b of every device in run k.
        cuts: ``[K]`` common cut of each run (integers in 1..L; a run may repeat, e.g. one run per seed).
        rounds: ``[K]`` measured rounds to the target of each run (> 0), ``None`` for a run that never reached it
            (left out). target_acc: the target accuracy, only for messages.
        fit_variance: fit λ too (needs runs at >= 2 distinct batch sizes); else λ = 1.

    Raises:
        ValueError: fewer than 2 distinct cuts (or, with ``fit_variance``, batch sizes) among the runs that
            reached the target (naming them and the target); NaN, inf or non-positive ``rounds``; ``batch``,
            ``cuts`` and ``rounds`` of different lengths; cuts outside 1..L; batch sizes < 1; the split term is 0
            at every cut (I = 1 or G² = 0: κ cannot be identified); with ``fit_variance``, σ² = 0 (λ cannot be
            identified); the runs that reached the target do not determine the unknowns (the system's rank is
            below 2 or 3, e.g. 2 runs for 3 unknowns). ParameterTypeError: wrong types.
    """
    if not isinstance(constants, HasflConstants):
        raise ParameterTypeError(f"constants must be HasflConstants, got {type(constants).__name__}")
    check_bool("fit_variance", fit_variance)
    if target_acc is not None:
        check_float("target_acc", target_acc, 0, 1, low_open=True)
    cuts, rounds = (v.tolist() if isinstance(v, np.ndarray) and v.ndim == 1 else v for v in (cuts, rounds))
    cuts = check_list("cuts", cuts, lambda n, v: check_int(n, v, 1, len(constants.G2)))
    rounds = check_list("rounds", rounds, lambda n, v: v if v is None else check_float(n, v, 0, low_open=True))  # None: not reached
    if isinstance(batch, np.ndarray):
        batch = batch.tolist()
    if isinstance(batch, (list, tuple)):
        batches = check_list("batch", batch, lambda n, v: check_int(n, v, 1))
    else:
        batches = [check_int("batch", batch, 1)] * len(cuts)
    if not len(batches) == len(cuts) == len(rounds):
        raise ValueError(f"batch, cuts and rounds must have the same length, got {len(batches)} batch sizes, "
                         f"{len(cuts)} cuts and {len(rounds)} rounds")
    check_int("num_devices", num_devices, 1)
    used = [(b, c, r) for b, c, r in zip(batches, cuts, rounds) if r is not None]
    dropped = tuple((b, c) for b, c, r in zip(batches, cuts, rounds) if r is None)
    target = "the target" if target_acc is None else f"the target {target_acc:g}"
    for name, k, need in (("cuts", 1, True), ("batch sizes", 0, fit_variance)):
        if need and len({u[k] for u in used}) < 2:
            raise ValueError(f"calibration needs runs at >= 2 distinct {name} that reach {target}; of {name} "
                             f"{sorted({u[k] for u in zip(batches, cuts)})}, only {sorted({u[k] for u in used})} "
                             f"reached it (runs not reached, (batch, cut): {sorted(set(dropped))})")

    variance, split = np.array([[float(t) for t in _floor_terms(constants, gamma, np.full(num_devices, float(b)),
                                                                 c, interval)] for b, c, _ in used]).T
    if not split.max() > 0:
        raise ValueError(f"the split term is 0 at every cut (interval I = {interval}, or G2 = 0): kappa cannot be "
                         "fitted")
    if fit_variance and not variance.max() > 0:
        raise ValueError("the variance term is 0 (sigma2 = 0 in the constants): lambda cannot be fitted; use "
                         "fit_variance=False")
    y = np.array([2 * constants.vartheta / (gamma * r) for _, _, r in used])
    cols = [np.ones(len(used)), -split / split.max()]           # columns of similar size for nnls
    if fit_variance:
        cols.append(-variance / variance.max())
    else:
        y = y + variance
    a = np.column_stack(cols)
    if np.linalg.matrix_rank(a) < a.shape[1]:
        raise ValueError(f"the runs that reached {target} do not determine the {a.shape[1]} unknowns (eps, kappa"
                         f"{', lambda' if fit_variance else ''}): (batch, cut) = {[(b, c) for b, c, _ in used]}; "
                         "add runs that vary the cut at a fixed batch size and the batch size at a fixed cut")
    x, res = nnls(a, y)
    kappa = float(x[1] / split.max())
    lam = float(x[2] / variance.max()) if fit_variance else 1.0
    cal = calibrated_constants(constants, kappa, lam)
    fit_rounds = tuple(fitted_rounds(cal, gamma, np.full(num_devices, float(b)), c, interval, float(x[0]))
                       for b, c, _ in used)
    return CalibrationFit(eps=float(x[0]), kappa=kappa, lam=lam, fit_variance=fit_variance,
                          batches=tuple(b for b, _, _ in used), cuts=tuple(c for _, c, _ in used),
                          rounds=tuple(float(r) for _, _, r in used), rounds_fit=fit_rounds, dropped=dropped,
                          residual=float(res / np.linalg.norm(y)))
