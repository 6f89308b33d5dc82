"""HIST convergence theory: step-size condition (12), Theorem 1 bound (13), Corollary 1, and the maximum
orders of H and E; plus estimators of the constants L, σ², δ1², δ2² on the real model and data.

Source: HIST paper Sec. IV (Theorem 1, Corollary 1, "The optimal values of H and E"). Notation: N cells, n_j clients in cell j, Ñ = Σ_j 1/n_j, step size γ, T client
iterations, H / E edge / cloud aggregation intervals.

Choices (the paper gives no estimation procedure; also in the README's deviations list):

- The first term of (13) is printed as 4(f(x̄0) − f*)/γ; the proof's telescoping sum gives 4(f(x̄0) − f*)/(γT).
  :func:`theorem1_bound` evaluates ``form="telescoped"`` by default and ``form="printed"`` on request.
- f* is unknown; cross-entropy is >= 0, so f(x̄0) − f* <= f(x̄0) and we use f(x̄0) (an upper bound).
- L (Assumption 2): the largest |eigenvalue| of the Hessian of F_i, by power iteration on Hessian-vector
  products (as PyHessian, Yao et al. 2020), maximised over a sample of clients and over the points given
  (global models along a pilot run). A local estimate: L is a global constant the paper does not measure.
- σ² (Assumption 4): E‖∇l(x, ξ) − ∇F_i(x)‖² for a minibatch ξ of the run's batch size, drawn as the engine
  draws them, by Monte Carlo; maximised over clients and points (the assumption holds for every i and x).
- δ1² (eq. 10) and δ2² (eq. 11, maximised over cells) from exact full-batch client gradients, maximised over
  the points.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ..core.validate import ParameterTypeError, check_choice, check_float, check_int


def n_tilde(clients_per_cell: Sequence[int]) -> float:
    """Ñ = Σ_j 1/n_j (Theorem 1).

    Raises:
        ValueError: empty, not 1-D, or a cell with no client. ParameterTypeError: non-integer counts (2.5, True).
    """
    n = np.asarray(clients_per_cell) if not isinstance(clients_per_cell, (str, bytes)) else np.asarray([])
    if n.dtype == bool or (n.size and not np.issubdtype(n.dtype, np.integer)):
        raise ParameterTypeError(f"clients_per_cell must be a non-empty list of integer counts >= 1, got "
                                 f"{clients_per_cell!r}")
    if n.ndim != 1 or len(n) == 0 or (n < 1).any():
        raise ValueError(f"clients_per_cell must be a non-empty list of counts >= 1, got {clients_per_cell!r}")
    return float((1.0 / n.astype(float)).sum())


def _check_theorem_inputs(N: int, integers: dict = None, **positive: float) -> None:
    """N >= 2 cells; ``integers`` (H, E, T) ints >= 1; ``positive`` finite numbers > 0."""
    if N < 2:
        raise ValueError(f"N (number of cells) must be >= 2 for Theorem 1, got {N}")
    for name, value in (integers or {}).items():
        check_int(name, value, 1)
    for name, value in positive.items():
        check_float(name, value, 0, low_open=True)


def step_size_terms(L: float, clients_per_cell: Sequence[int], H: int, E: int) -> dict:
    """The four upper bounds on γ in condition (12) and their minimum.

    γ <= min{ 1/(32 E sqrt(N−1) L), Ñ/(N H L), 1/(N H² L), 1/((N+1) E L) }.

    Returns:
        ``{"terms": [4 floats], "gamma_max": min, "binding": index of the smallest term (0..3)}``.

    Raises:
        ValueError: N < 2, L <= 0 or not finite, H or E < 1. ParameterTypeError: H, E not integers.
    """
    nt = n_tilde(clients_per_cell)
    N = len(clients_per_cell)
    _check_theorem_inputs(N, {"H": H, "E": E}, L=L)
    terms = [1.0 / (32 * E * math.sqrt(N - 1) * L), nt / (N * H * L), 1.0 / (N * H ** 2 * L),
             1.0 / ((N + 1) * E * L)]
    k = int(np.argmin(terms))
    return {"terms": terms, "gamma_max": terms[k], "binding": k}


def step_size_ok(gamma: float, L: float, clients_per_cell: Sequence[int], H: int, E: int) -> bool:
    """Whether γ satisfies condition (12). Raises as :func:`step_size_terms`, and for γ <= 0 or not finite."""
    check_float("gamma", gamma, 0, low_open=True)
    return gamma <= step_size_terms(L, clients_per_cell, H, E)["gamma_max"]


def theorem1_bound(gamma: float, L: float, sigma2: float, delta1_sq: float, delta2_sq: float, f_gap: float,
                   clients_per_cell: Sequence[int], E: int, T: int, mean_sq_norm: float,
                   form: str = "telescoped") -> dict:
    """Right-hand side of Theorem 1, eq. (13), term by term.

    (1/T) Σ_t E‖∇f(x̂^t)‖² <= init + 50γÑLσ² + 24γLδ2² + 12δ1² + 24(N−1)L²(E/T) Σ_m E‖x̄^{mE}‖²

    with init = 4(f(x̄0) − f*)/(γT) (``form="telescoped"``, the proof's) or 4(f(x̄0) − f*)/γ
    (``form="printed"``, the paper's text). (E/T) Σ_{m<T/E} ‖x̄^{mE}‖² is ``mean_sq_norm``, the mean squared
    norm of the global models at the synchronisations.

    Args:
        gamma: γ. L: smoothness. sigma2: σ². delta1_sq: δ1². delta2_sq: δ2². f_gap: f(x̄0) − f*.
        clients_per_cell: [n_1..n_N]. E: cloud interval. T: iterations. mean_sq_norm: see above.

    Returns:
        ``{"init", "variance", "client_dissimilarity", "cell_dissimilarity", "model_norm", "total"}``.

    Raises:
        ValueError: N < 2, non-positive γ / L / T / E, negative constants, NaN or inf anywhere, unknown ``form``.
        ParameterTypeError: T, E not integers, constants not numbers.
    """
    nt = n_tilde(clients_per_cell)
    N = len(clients_per_cell)
    _check_theorem_inputs(N, {"T": T, "E": E}, gamma=gamma, L=L)
    for name, value in (("sigma2", sigma2), ("delta1_sq", delta1_sq), ("delta2_sq", delta2_sq),
                        ("f_gap", f_gap), ("mean_sq_norm", mean_sq_norm)):
        check_float(name, value, 0)
    check_choice("form", form, ("telescoped", "printed"))
    terms = {
        "init": 4 * f_gap / (gamma * T) if form == "telescoped" else 4 * f_gap / gamma,
        "variance": 50 * gamma * nt * L * sigma2,
        "client_dissimilarity": 24 * gamma * L * delta2_sq,
        "cell_dissimilarity": 12 * delta1_sq,
        "model_norm": 24 * (N - 1) * L ** 2 * mean_sq_norm,
    }
    terms["total"] = sum(terms.values())
    return terms


def corollary1_step_size(T: int, clients_per_cell: Sequence[int]) -> float:
    """Corollary 1's step size γ = (T Ñ)^{-1/2}. Raises ``ValueError`` for T < 1 (a TypeError for non-integer T)."""
    check_int("T", T, 1)
    return 1.0 / math.sqrt(T * n_tilde(clients_per_cell))


def corollary1_min_T(L: float, clients_per_cell: Sequence[int], H: int, E: int) -> int:
    """Smallest T for which Corollary 1's γ = (TÑ)^{-1/2} satisfies (12): T >= 1/(Ñ γ_max²)."""
    gmax = step_size_terms(L, clients_per_cell, H, E)["gamma_max"]
    return int(math.ceil(1.0 / (n_tilde(clients_per_cell) * gmax ** 2)))


def max_H_order(clients_per_cell: Sequence[int], T: int) -> float:
    """Largest order of H with γ = (TÑ)^{-1/2}: min{(ÑT)^{1/4} N^{-1/2}, Ñ^{3/2} T^{1/2} N^{-1}}.

    An order of magnitude (the O(·) constants are dropped), as stated after Corollary 1."""
    check_int("T", T, 1)
    N, nt = len(clients_per_cell), n_tilde(clients_per_cell)
    return min((nt * T) ** 0.25 / math.sqrt(N), nt ** 1.5 * math.sqrt(T) / N)


def max_E_order(clients_per_cell: Sequence[int], T: int) -> float:
    """Largest order of E with γ = (TÑ)^{-1/2}: (ÑT)^{1/2} N^{-1} (constants dropped)."""
    check_int("T", T, 1)
    N, nt = len(clients_per_cell), n_tilde(clients_per_cell)
    return math.sqrt(nt * T) / N
