"""The benchmarks' speed-ups point the right way: a variant 3x faster than its baseline is reported as 3x, not
0.33x. Checked on hand-made timings (no timing of this machine is involved, so the numbers are exact)."""
import pytest
from torch.utils.benchmark import Measurement, TaskSpec

from fedlib.lab import benchtime


def _measured(name: str, seconds: list[float]) -> Measurement:
    return Measurement(1, seconds, TaskSpec(stmt=f"{name}()", setup="pass", label="test", description=name))


def test_a_faster_variant_has_a_speedup_above_one():
    fast, slow = _measured("fast", [1.0, 2.0, 1.0]), _measured("slow", [3.0, 6.0, 3.0])
    up = benchtime.ratio_spread(fast, 10.0, slow, 10.0)
    assert up == {"median": 3.0, "iqr": [3.0, 3.0], "min_max": [3.0, 3.0], "n": 3}
    assert benchtime.ratio_spread(slow, 10.0, fast, 10.0)["median"] == pytest.approx(1 / 3, abs=1e-3)
    # twice the work in the same time is twice the rate
    assert benchtime.ratio_spread(_measured("a", [2.0]), 200.0, _measured("b", [2.0]), 100.0)["median"] == 2.0
    assert benchtime.rate_spread(_measured("a", [2.0, 4.0]), 100.0) == {"median": 37.5, "iqr": [31.2, 43.8],
                                                                         "min_max": [25.0, 50.0], "n": 2}


def _fake_timing(seconds: dict[str, float]):
    """A stand-in for time_interleaved: each call named in ``seconds`` 'takes' that long (never run)."""
    def timed(calls, repeats, warmup=1, device="cpu"):
        missing = set(calls) - set(seconds)
        assert not missing, missing
        return {k: _measured(k, [seconds[k]] * repeats) for k in calls}, {}
    return timed


def test_the_sweep_benchmark_reports_batched_3x_faster_as_3x(monkeypatch):
    from fedlib.lab.dtfl import bench
    monkeypatch.setattr(bench, "time_interleaved", _fake_timing({"one_at_a_time": 3.0, "batched": 1.0}))
    out = bench.bench_dtfl_sweep(runs=2, rounds=1, device="cpu", data=object(), repeats=2)
    assert out["speedup"]["median"] == 3.0
    assert out["runs_per_hour"]["batched"]["median"] == 2 * 3600 / 1.0
    assert out["runs_per_hour"]["one_at_a_time"]["median"] == 2 * 3600 / 3.0


def test_the_split_benchmark_reports_the_stacked_backend_3x_faster_as_3x(monkeypatch, fmnist):
    from fedlib.lab.split import bench
    monkeypatch.setattr(bench, "time_interleaved", _fake_timing(
        {"per_client_loop": 3.0, "engine_loop_backend": 1.5, "stacked_backend": 1.0}))
    out = bench.bench_sfl(widths=(0.0625,), repeats=2, rounds={0.0625: 1}, device="cpu", threads=1, data=fmnist)
    up = next(iter(out["widths"].values()))["speedup_vs_per_client_loop"]
    assert up["stacked_backend"]["median"] == 3.0 and up["engine_loop_backend"]["median"] == 2.0


def test_bench_help_names_what_each_measures_and_the_explorer_targets(capsys):
    from fedlib.lab import bench

    with pytest.raises(SystemExit) as exit_:
        bench.main(["explore", "--help"])
    out = capsys.readouterr().out
    assert exit_.value.code == 0
    assert "update_s = compute + views + the display of what changed" in out
    assert "HASFL <= 2 s" in out and "<= 5 s at the sliders' slow corners (N = 50," in out and "DTFL and HIST <= 0.5 s" in out
    for name in ("explore", "hist", "hasfl", "sfl", "dtfl", "dtfl_sweep"):
        assert f"\n  {name} " in out


def test_the_per_client_loop_outside_the_repository_root_says_where_it_lives(tmp_path):
    """The benchmarks' per-client loops are the tests' literal references (tests/reference_*.py): run from another
    folder, the benchmark says so instead of a bare 'No module named tests'."""
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-c", "import fedlib.lab.split.bench"], cwd=tmp_path, capture_output=True,
                         text=True)
    assert out.returncode == 1
    assert ("no module tests.reference_split: the benchmark's per-client loop is tests/reference_split.py; run "
            "python -m fedlib.lab.bench from the repository's root") in out.stderr
    from fedlib.lab.split.bench import from_tests
    assert from_tests("reference_hist").__name__ == "tests.reference_hist"   # from the root (the tests' folder)
    with pytest.raises(ModuleNotFoundError, match="tests/no_such_loop.py"):
        from_tests("no_such_loop")
