"""HASFL's system model and convergence bound: :mod:`.latency` (the round's latency, eqs. 28-40, and Table I),
:mod:`.theory` (Theorem 1, Corollary 1), :mod:`.estimate` (the bound's constants from a pilot run) and
:mod:`.problem` (problem (41), its objective Θ and feasibility). The public names are re-exported by
:mod:`fedlib.hasfl`."""
