"""Physical inputs outside any real device (fedlib.lab.units) are refused where a researcher types them, with the
unit the input expects and the unit the number would fit: a compute speed in FLOP/s where TFLOP/s or GFLOP/s is
expected, a link in bit/s where Mbit/s is, memory in bytes where GB is. Before any work; nothing is clamped."""
import math
import re

import numpy as np
import pytest

from fedlib.lab import units
from fedlib.lab.dtfl import experiments as dx
from fedlib.lab.dtfl import explore as dxp
from fedlib.lab.hasfl import explore as hx


@pytest.mark.parametrize("value, quantity, unit, words", [
    (1e12, "compute", "TFLOP/s", "1e+12 TFLOP/s is 1e+24 FLOP/s, above any real device or server compute"),
    (1e12, "compute", "GFLOP/s", "the input is in GFLOP/s: did you give FLOP/s? (1e+12 FLOP/s = 1e+03 GFLOP/s)"),
    (1e7, "rate", "Mbit/s", "1e+07 Mbit/s is 1e+13 bit/s, above any real link rate"),
    (1e7, "rate", "Mbit/s", "did you give bit/s? (1e+07 bit/s = 10 Mbit/s)"),
    (4e9, "memory", "GB", "did you give B? (4e+09 B = 4 GB)"),
    (1e-5, "rate", "Mbit/s", "is 10 bit/s, below any real link rate"),
    (1e12, "samples", "samples", "outside the plausible number of samples on one client (1 to 1e+09 samples)"),
])
def test_a_unit_slip_is_refused_with_the_unit_expected_and_the_one_it_fits(value, quantity, unit, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        units.check_plausible("x", value, quantity, unit)


@pytest.mark.parametrize("value, quantity, unit, words", [
    (1.0004e12, "rate", "bit/s", "1.0004e+12 bit/s is 1.0004e+12 bit/s, above any real link rate (100 to 1e+12 bit/s)"),
    (99.99, "rate", "bit/s", "99.99 bit/s is 99.99 bit/s, below any real link rate"),
    (1e9 + 1, "samples", "samples", "1000000001 samples is outside the plausible number of samples"),
])
def test_a_value_just_past_its_bound_prints_with_the_digits_that_tell_them_apart(value, quantity, unit, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        units.check_plausible("x", value, quantity, unit)


def test_real_systems_pass_unchanged():
    """Table I's and DTFL's values, an H200-class device, a slow IoT radio: returned as given, in their unit."""
    for value, quantity, unit in ((1.0, "compute", "TFLOP/s"), (2000.0, "compute", "TFLOP/s"), (30.0, "compute",
                                  "GFLOP/s"), (0.3, "rate", "kbit/s"), (370.0, "rate", "Mbit/s"), (400.0, "rate",
                                  "Gbit/s"), (0.5, "memory", "GB"), (100, "samples", "samples"), (0.1, "cpus", "CPUs")):
        assert units.check_plausible("x", value, quantity, unit) == value
    for bad, words in ((math.nan, "finite"), (math.inf, "finite"), (-1.0, "> 0"), (0.0, "> 0")):
        with pytest.raises(ValueError, match=words):
            units.check_plausible("x", bad, "rate", "Mbit/s")
    with pytest.raises(TypeError, match="x must be"):
        units.check_plausible("x", "10", "rate", "Mbit/s")
    with pytest.raises(ValueError, match="unit of rate must be one of bit/s, kbit/s"):
        units.check_plausible("x", 10, "rate", "Mbps")
    with pytest.raises(ValueError, match="quantity must be one of"):
        units.check_plausible("x", 10, "speed", "Mbit/s")


def test_every_range_holds_its_units_prefixes_once():
    """One table: each quantity's range low < high, > 0; the explorers' sliders lie inside it (a slider cannot
    reach a value the explorer then refuses)."""
    for base, lo, hi, what in units.PLAUSIBLE.values():
        assert 0 < lo < hi and what
    for lo, hi in (dxp.CPU_BOUNDS,):
        units.check_plausible_all("cpus", [lo, hi], "cpus", "CPUs")
    units.check_plausible_all("mbps", list(dxp.MBPS_BOUNDS), "rate", "Mbit/s")


@pytest.mark.parametrize("text, words", [
    ("1e12, 80, 370, 0.5", "devices row 1, compute_tflops: 1e+12 TFLOP/s is 1e+24 FLOP/s"),
    ("1, 80, 370, 0.5\n1, 8e7, 370, 0.5", "devices row 2, uplink_mbps: 8e+07 Mbit/s is 8e+13 bit/s"),
    ("1, 80, 3.7e8, 0.5", "downlink_mbps: .*did you give bit/s"),
    ("1, 80, 370, 4e9", "devices row 1, memory_gb: 4e+09 GB is 4e+18 B.*did you give B"),
])
def test_typed_hasfl_devices_with_a_unit_slip_are_refused(text, words):
    with pytest.raises(ValueError, match=words.replace("+", r"\+")):
        hx.devices_from_text(text)
    hx.devices_from_text("1, 80, 370, 0.5; 2000, 1000, 1000, 80")          # an H200-class device passes


def test_hasfl_explorer_ranges_refuse_a_unit_slip_by_control():
    with pytest.raises(ValueError, match=r"device_tflops \(low, high\): 1e\+11 TFLOP/s is 1e\+23 FLOP/s"):
        hx._range("device_tflops", (1e11, 1e12))
    with pytest.raises(ValueError, match=r"uplink_mbps \(low, high\): .*did you give bit/s"):
        hx._range("uplink_mbps", (7.5e7, 8e7))
    assert hx._range("memory_gb", (0.5, 1.0), 1000.0) == (0.5, 1.0)


@pytest.mark.parametrize("text, words", [
    ("2, 1e7\n1, 30", r"row 1, mbps: 1e\+07 Mbit/s is 1e\+13 bit/s.*did you give bit/s\? \(1e\+07 bit/s = 10 Mbit/s\)"),
    ("cpus, mbps\n2, 30\n1, 3e7", "row 3, mbps: .*did you give bit/s"),
    ("2, 30, 1e12", r"row 1, samples: 1e\+12 samples is outside the plausible"),
    ("2e6, 30", r"row 1, cpus: 2e\+06 CPUs is outside"),
])
def test_typed_dtfl_clients_with_a_unit_slip_are_refused(text, words):
    with pytest.raises(ValueError, match=words):
        dxp.clients_from_text(text)


def test_dtfl_explorer_speeds_and_ranges_are_refused_before_the_model_is_profiled(monkeypatch):
    def no_work(*a, **k):
        raise AssertionError("the model was profiled before the input was checked")
    monkeypatch.setattr(dxp, "_models", no_work)
    for kw, words in ((dict(core_gflops=3e10), r"core_gflops: 3e\+10 GFLOP/s is 3e\+19 FLOP/s.*did you give FLOP/s"),
                      (dict(server_gflops=5e10), "server_gflops: .*did you give FLOP/s"),
                      (dict(mbps_range=(1e7, 1e8)), r"mbps_range\[0\]: .*did you give bit/s"),
                      (dict(samples_per_client=10 ** 12), "samples_per_client: .*plausible"),
                      (dict(clients="2, 1e7"), "row 1, mbps: .*did you give bit/s")):
        with pytest.raises(ValueError, match=words):
            dxp.compute(**kw)


def test_dtfl_typed_profiles_and_timelines_refuse_a_unit_slip():
    from fedlib.dtfl import ResourceProfile
    from fedlib.lab.dtfl import timeline as tl
    with pytest.raises(ValueError, match=r"case\[1\]\.mbps: 3e\+07 Mbit/s.*did you give bit/s"):
        dx.typed_clients([ResourceProfile(2, 30), ResourceProfile(2, 3e7)], 2)
    assert len(dx.typed_clients([ResourceProfile(2, 30)], 1)) == 1
    with pytest.raises(ValueError, match=r"mbps\[1\]: 3e\+07 Mbit/s"):
        tl._clients([1.0, 2.0], [30.0, 3e7], 100, 2)
    with pytest.raises(ValueError, match=r"core_flops: 3e\+22 FLOP/s"):
        tl._speeds(3e22, 50e9)
    cpus, mbps, n = tl._clients(np.array([1.0, 2.0]), 30.0, 100, 2)
    assert mbps.tolist() == [30.0, 30.0]
