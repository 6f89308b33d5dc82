"""HASFL's system model and convergence bound: :mod:`.latency` (the round's latency, eqs. 28-40, and Table I),
:mod:`.theory` (Theorem 1, Corollary 1), :mod:`.estimate` (the bound's constants from a pilot run),
:mod:`.beta24` ([24]'s β estimator on a federated pilot), :mod:`.calibrate` (ours: the bound's ε, κ, λ fitted to
measured rounds) and
:mod:`.problem` (problem (41), its objective Θ and feasibility). The public names are re-exported by
:mod:`fedlib.hasfl`."""
