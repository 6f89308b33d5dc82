"""Seeded random instances of problem (41) for testing and benchmarking the optimiser against exhaustive search.

Each instance: N devices drawn from Table I's ranges with unequal memory, VGG-16's measured profile (CIFAR
3×32×32) with a random subset of 4-8 allowed cuts, constants drawn around the values estimated on real data (β,
σ_j², G_j², ϑ; ``shared/spec/hasfl.md``), γ = 5·10⁻⁴, I ∈ {1, 3, 10, 15}, ε between 2 % and 200 % above the
bound's floor at b_i = ``max_batch``, L_c = the smallest allowed cut, and ``max_batch`` from ``b_max``.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..core.seeding import numpy_rng
from ..core.validate import check_int, check_list
from ..split import model_profile, sample_system
from ..split.config import NUM_UNITS
from .latency import TABLE_I
from .problem import Problem
from .theory import HasflConstants, bound_floor


def random_instance(seed: int, num_devices: tuple = (2, 4), num_cuts: tuple = (4, 8),
                    b_max: tuple = (32, 64)) -> Problem:
    """One seeded instance (``system`` stream of ``seed``); ranges are inclusive ``(low, high)``.

    Raises:
        ValueError: an empty or inverted range, or ``num_cuts`` above VGG-16's 16 layers (never clamped).
        ParameterTypeError: a range that is not two integers.
    """
    layers = NUM_UNITS["vgg16"]                     # checked before the (slower) profile is measured
    for name, value, top in (("num_devices", num_devices, None), ("num_cuts", num_cuts, layers),
                             ("b_max", b_max, None)):
        rng_text = f"1 <= low <= high{'' if top is None else f' <= {top} (the layers of VGG-16)'}"
        items = check_list(name, value, lambda k, v, top=top: check_int(k, v, 1, top))
        if len(items) != 2 or not items[0] <= items[1]:
            raise ValueError(f"{name} must be a range (low, high) of integers with {rng_text}, got {value!r}")
    rng = numpy_rng(seed, "system")
    profile = model_profile("vgg16")
    n = int(rng.integers(num_devices[0], num_devices[1] + 1))
    k = int(rng.integers(num_cuts[0], num_cuts[1] + 1))
    cuts = tuple(sorted(int(c) for c in rng.choice(np.arange(1, profile.num_layers + 1), size=k, replace=False)))
    mem_lo = rng.uniform(5e6, 60e6)
    spec = replace(TABLE_I, num_devices=n, memory_bytes=(mem_lo, mem_lo * rng.uniform(1.5, 6.0)))
    devices, servers = sample_system(spec, rng)
    L = profile.num_layers
    consts = HasflConstants(beta=float(rng.uniform(20, 400)), sigma2=rng.uniform(10, 500, L),
                            G2=rng.uniform(0.5, 35, L) * 10 ** rng.uniform(-5, 0), vartheta=float(rng.uniform(1.5, 3.0)))
    gamma, interval = 5e-4, int(rng.choice([1, 3, 10, 15]))
    bmax = int(rng.integers(b_max[0], b_max[1] + 1))
    floor = float(bound_floor(consts, gamma, np.full(n, float(bmax)), cuts[0], interval))
    eps = floor * (1 + float(rng.uniform(0.02, 2.0)))
    return Problem(profile, devices, servers, consts, gamma, eps, interval, cuts, max_batch=bmax)
