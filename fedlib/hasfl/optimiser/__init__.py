"""HASFL's optimiser of batch sizes and cut layers: :mod:`.p1` (Newton-Jacobi and Proposition 1), :mod:`.p2`
(Dinkelbach over MILPs), :mod:`.memo` (the key of their memo), :mod:`.bcd` (Algorithm 2), :mod:`.batch_search`
(exact batch sizes at fixed cuts), :mod:`.refinement` (polish, cut moves, cut enumeration), :mod:`.exhaustive` (the
reference search), :mod:`.strategies` (the paper's benchmarks) and :mod:`.instances` (seeded random problems for
tests and benchmarks). The public names are re-exported by :mod:`fedlib.hasfl`."""
