"""HASFL's lab: the experiments behind its figures (runs through the result store), the figures, the paper's claims
and their verdicts, the checks of a notebook's parameters before any work, and the explorer. The method itself is
:mod:`fedlib.hasfl`."""
