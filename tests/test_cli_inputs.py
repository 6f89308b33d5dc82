"""Command lines and notebook helpers check their arguments before any work, and say what happened."""
import pytest

from fedlib.lab import bench, prune
from fedlib.lab import notebooks
from fedlib.lab.parallel import set_threads


@pytest.mark.parametrize("argv, where", [(["sfl", "--repeats", "0"], "--repeats"), (["dtfl", "--rounds", "-1"], "--rounds"),
                                         (["hist", "--repeats", "two"], "--repeats"),
                                         (["sfl", "--device", "gpu"], "--device")])
def test_bench_refuses_bad_arguments_before_any_work(argv, where, capsys, monkeypatch):
    import fedlib.lab.split.bench
    monkeypatch.setattr(fedlib.lab.split.bench, "bench_sfl", lambda **k: pytest.fail("benchmark started"))
    with pytest.raises(SystemExit) as exc:
        bench.main(argv)
    assert exc.value.code == 2 and f"argument {where}" in capsys.readouterr().err


def test_prune_on_a_folder_without_records_names_the_store_below(tmp_path, capsys):
    store = tmp_path / "converged" / "store"
    store.mkdir(parents=True)
    (store / "0123.json").write_text("{}")
    assert prune.main(["--dir", str(tmp_path / "converged")]) == 2
    err = capsys.readouterr().err
    assert "is not a result store" in err and f"did you mean {store}" in err


def test_notebook_runner_says_nothing_ran(tmp_path, capsys):
    assert notebooks.main(["--profile", "converged", "--only", "hist_2*", "--out", str(tmp_path)]) == 1
    out, err = capsys.readouterr()
    assert "nothing ran" in err and "executed notebooks" not in out


@pytest.mark.parametrize("bad", [-1, 1.5, True, "2"])
def test_threads_parameter_is_named(bad):
    with pytest.raises(ValueError, match="threads"):
        set_threads(bad)
    assert set_threads(0) >= 1


@pytest.mark.parametrize("argv, message", [(["sfl", "--rounds", "3"], "--rounds: applies to dtfl, dtfl_sweep only, not sfl"),
                                           (["hasfl", "--device", "cuda"], "--device: applies to hist, sfl, dtfl, dtfl_sweep only")])
def test_bench_refuses_arguments_that_do_not_apply(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        bench.main(argv)
    assert exc.value.code == 2 and message in capsys.readouterr().err


def test_data_command_names_itself_and_refuses_an_option_that_does_not_apply(tmp_path, capsys):
    from fedlib.lab.data import main
    with pytest.raises(SystemExit):
        main(["cifar10", "--debian-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert err.startswith("usage: python -m fedlib.lab.data") and "--debian-dir: applies to fashion-mnist only" in err


@pytest.mark.parametrize("args, message", [(["--profile", "--only", "hist"], "--profile needs a value"),
                                           (["--only", "--tests"], "--only needs a pattern, got the option"),
                                           (["--only", "hist", "--only", "dtfl"], "--only given twice"),
                                           (["--profile", "smoke", "--profile=quick"], "--profile given twice")])
def test_run_all_names_a_missing_option_value(args, message):
    import subprocess
    from fedlib.lab.paths import REPO_ROOT
    res = subprocess.run(["bash", str(REPO_ROOT / "run_all.sh"), *args], capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and message in res.stderr
