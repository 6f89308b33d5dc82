"""Seeded random instances of HASFL's problem (41) for testing and benchmarking the optimiser against exhaustive search.

Each instance: N devices drawn from Table I's ranges with unequal memory, VGG-16's measured profile (CIFAR
3×32×32) with a random subset of 4-8 allowed cuts, constants drawn around the values estimated on real data (β,
σ_j², G_j², ϑ), γ = 5·10⁻⁴, I ∈ {1, 3, 10, 15}, ε between 2 % and 200 % above the
bound's floor at b_i = ``max_batch``, L_c = the smallest allowed cut, and ``max_batch`` from ``b_max``.

Harder instances (where the optimiser's last gaps were), each option drawn after the default draws so that the
default instances do not change: ``memory="tight"`` (each device's memory admits only 1.5-20 samples at the
shallowest allowed cut, so batch caps are small and unequal), ``links="mixed"`` (device compute log-uniform in
0.1-2 TFLOP/s, up- and downlinks log-uniform in 2-200 Mbit/s: stragglers differ per phase), and ``eps_slack``
(ε as (1 + slack)·floor; (0.001, 0.05) puts ε near the floor).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from fedlib.core.seeding import numpy_rng
from fedlib.core.validate import check_choice, check_float, check_int, check_list
from fedlib.split import model_profile, sample_system
from fedlib.split.config import NUM_UNITS
from fedlib.hasfl.bound.latency import TABLE_I
from fedlib.hasfl.bound.problem import Problem
from fedlib.hasfl.bound.theory import HasflConstants, bound_floor


def random_instance(seed: int, num_devices: tuple = (2, 4), num_cuts: tuple = (4, 8),
                    b_max: tuple = (32, 64), memory: str = "table", links: str = "table",
                    eps_slack: tuple = (0.02, 2.0)) -> Problem:
    """One seeded instance (``system`` stream of ``seed``); integer ranges are inclusive ``(low, high)``.

    Args:
        memory: "table" (5-60 MB up to 6x that) or "tight" (1.5-20 samples fit at the shallowest allowed cut; ε then from the floor at those batch caps).
        links: "table" (Table I's ranges) or "mixed" (log-uniform compute and link rates, module docstring).
        eps_slack: ``(low, high)`` floats > 0: ε = (1 + U(low, high))·floor.

    Raises:
        ValueError: an empty or inverted range, ``num_cuts`` above VGG-16's 16 layers (never clamped), an unknown
            ``memory`` / ``links`` name, ``eps_slack`` not 0 < low <= high.
        ParameterTypeError: a range that is not two integers (two numbers for ``eps_slack``).
    """
    layers = NUM_UNITS["vgg16"]                     # checked before the (slower) profile is measured
    for name, value, top in (("num_devices", num_devices, None), ("num_cuts", num_cuts, layers),
                             ("b_max", b_max, None)):
        rng_text = f"1 <= low <= high{'' if top is None else f' <= {top} (the layers of VGG-16)'}"
        items = check_list(name, value, lambda k, v, top=top: check_int(k, v, 1, top))
        if len(items) != 2 or not items[0] <= items[1]:
            raise ValueError(f"{name} must be a range (low, high) of integers with {rng_text}, got {value!r}")
    for name, value, allowed in (("memory", memory, ("table", "tight")), ("links", links, ("table", "mixed"))):
        check_choice(name, value, allowed)
    slack = check_list("eps_slack", eps_slack, lambda k, v: check_float(k, v, 0, low_open=True))
    if len(slack) != 2 or not slack[0] <= slack[1]:
        raise ValueError(f"eps_slack must be a range (low, high) with 0 < low <= high, got {eps_slack!r}")
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
    u = float(rng.uniform(*slack))
    b_ref = np.full(n, float(bmax))
    if memory == "tight":
        j0 = cuts[0] - 1
        per = profile.act_bits_cum[j0] + profile.grad_bits_cum[j0]
        fixed = profile.opt_state_bits[j0] + profile.param_bits[j0]
        fits = rng.uniform(1.5, 20.0, n)
        devices = replace(devices, memory_bits=fixed + per * fits)
        b_ref = np.minimum(b_ref, np.ceil(fits) - 1)               # the largest batch each device fits (C4 strict)
    eps = float(bound_floor(consts, gamma, b_ref, cuts[0], interval)) * (1 + u)
    if links == "mixed":
        lu = lambda lo, hi: 10 ** rng.uniform(np.log10(lo), np.log10(hi), n)    # noqa: E731
        devices = replace(devices, flops=lu(0.1e12, 2e12), rate_up=lu(2e6, 200e6), rate_down=lu(2e6, 200e6))
    return Problem(profile, devices, servers, consts, gamma, eps, interval, cuts, max_batch=bmax)
