"""The benchmarks' timing (fedlib.lab.benchtime) and their output: warm-up, interleaved repeats, each median inside
its reported spread, the three baselines named. The benchmarks run at their tiniest settings (seconds, one thread);
no speed is asserted."""
import pytest

from fedlib.lab import bench
from fedlib.lab.benchtime import rate_spread, ratio_spread, spread, time_interleaved

BASELINES = {"per_client_loop", "engine_loop_backend", "stacked_backend"}


def _summaries(obj):
    """Every ``{"median", "iqr", "min_max", "n"}`` dict inside ``obj``."""
    if isinstance(obj, dict):
        if "median" in obj:
            yield obj
        else:
            for v in obj.values():
                yield from _summaries(v)


def _check_spreads(out: dict) -> int:
    found = list(_summaries(out))
    for s in found:
        lo, hi = s["min_max"]
        q1, q3 = s["iqr"]
        assert lo <= q1 <= s["median"] <= q3 <= hi, s
        assert s["n"] >= 1
    return len(found)


def test_calls_are_warmed_up_then_interleaved():
    order = []
    calls = {name: (lambda name=name: order.append(name)) for name in ("a", "b", "c")}
    times, peaks = time_interleaved(calls, repeats=3, warmup=2)
    assert order == ["a", "a", "b", "b", "c", "c"] + ["a", "b", "c"] * 3
    assert {k: len(m.times) for k, m in times.items()} == {"a": 3, "b": 3, "c": 3} and peaks == {}
    assert all(t > 0 for m in times.values() for t in m.times)


def test_spread_orders_its_statistics_and_pairs_ratios_by_repeat():
    assert spread([4.0, 1.0, 3.0, 2.0]) == {"median": 2.5, "iqr": [1.8, 3.2], "min_max": [1.0, 4.0], "n": 4}
    times, _ = time_interleaved({"x": lambda: None, "y": lambda: None}, repeats=5, warmup=0)
    r = rate_spread(times["x"], 100.0)
    assert r["min_max"][0] <= r["median"] <= r["min_max"][1] and r["n"] == 5
    assert ratio_spread(times["x"], 1.0, times["x"], 1.0) == {"median": 1.0, "iqr": [1.0, 1.0],
                                                              "min_max": [1.0, 1.0], "n": 5}


@pytest.mark.parametrize("kwargs", [dict(calls={}, repeats=1), dict(calls={"a": int}, repeats=0),
                                    dict(calls={"a": int}, repeats=1, warmup=-1)])
def test_timing_refuses_bad_arguments(kwargs):
    with pytest.raises(ValueError, match="repeats"):
        time_interleaved(**kwargs)


def test_bench_sfl_reports_medians_inside_their_spread_for_the_three_baselines(fmnist):
    from fedlib.lab.split.bench import bench_sfl
    out = bench_sfl(widths=(0.0625,), repeats=2, rounds={0.0625: 1}, device="cpu", threads=1, data=fmnist)
    assert set(out["baselines"]) == BASELINES and "load_1min" in out
    assert not any("roofline" in k for k in out)          # no ceiling it cannot defend (module docstring)
    res = out["widths"]["w00625"]
    assert set(res["samples_per_s"]) == BASELINES
    assert set(res["speedup_vs_per_client_loop"]) == BASELINES - {"per_client_loop"}
    assert _check_spreads(out) == 5 and res["samples_per_s"]["stacked_backend"]["n"] == 2


def test_bench_dtfl_reports_medians_inside_their_spread_for_the_three_baselines(fmnist, one_thread):
    from fedlib.lab.dtfl.bench import bench_dtfl
    out = bench_dtfl(rounds=1, repeats=2, width=0.0625, device="cpu", data=fmnist, train_subset=100, test_subset=20)
    assert set(out["baselines"]) == BASELINES
    for method in ("dtfl", "fedavg"):
        assert set(out[method]["samples_per_s"]) == BASELINES
        assert set(out[method]["speedup_vs_per_client_loop"]) == BASELINES - {"per_client_loop"}
    assert _check_spreads(out) == 10


def test_cli_passes_width_to_sfl_and_repeats_to_dtfl(monkeypatch, capsys):
    import fedlib.lab.dtfl.bench
    import fedlib.lab.split.bench
    seen = {}
    monkeypatch.setattr(fedlib.lab.split.bench, "bench_sfl", lambda **k: seen.setdefault("sfl", k) and {})
    monkeypatch.setattr(fedlib.lab.dtfl.bench, "bench_dtfl", lambda *a, **k: seen.update(dtfl=(a, k)) or {})
    assert bench.main(["sfl", "--width", "0.5", "--repeats", "2"]) == 0
    assert bench.main(["dtfl", "--repeats", "4"]) == 0
    assert seen["sfl"]["widths"] == (0.5,) and seen["sfl"]["repeats"] == 2
    assert seen["dtfl"][1]["repeats"] == 4 and seen["dtfl"][1]["variants"] == ()
    assert bench.main(["dtfl", "--variants", "stacked_cl, stacked_compile"]) == 0
    assert seen["dtfl"][1]["variants"] == ("stacked_cl", "stacked_compile")
    with pytest.raises(SystemExit):
        bench.main(["hasfl", "--width", "1"])
    assert "--width: applies to sfl, dtfl, dtfl_sweep only" in capsys.readouterr().err
