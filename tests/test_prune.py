"""fedlib.lab.prune: stale records (another code hash) are reported and, on request, deleted; current and unreadable
files are left alone."""
import json

import pytest

from fedlib.lab import prune
from fedlib.lab.store import ResultStore


def test_prune_deletes_only_records_of_other_code(tmp_path, capsys):
    old = ResultStore(tmp_path, code=("fedlib.core",))           # "older code": a hash no current store has
    new = ResultStore(tmp_path, code=("fedlib.data",))
    for i in range(3):
        old.save({"run": i}, {"acc": 0.5})
    kept = new.save({"run": 0}, {"acc": 0.7})
    (tmp_path / "broken.json").write_text("{not json")
    current = {new.code_hash}
    report = prune.prune(tmp_path, current=current)
    assert (report["current"], report["stale"], report["unreadable"], report["deleted"]) == (1, 3, 1, 0)
    assert report["stale_by_hash"] == {old.code_hash: 3}
    assert len(list(tmp_path.glob("*.json"))) == 5                # report only
    report = prune.prune(tmp_path, delete=True, current=current)
    assert report["deleted"] == 3
    assert sorted(p.name for p in tmp_path.glob("*.json")) == sorted(["broken.json", kept.name])
    assert new.load({"run": 0})["acc"] == 0.7


def test_current_hashes_name_the_six_stores():
    names = sorted(prune.current_hashes().values())
    assert names == ["dtfl", "dtfl_stacked", "hasfl", "hasfl_train", "hasfl_train_stacked", "hist"]


def test_a_stacked_backend_record_is_current_and_never_deleted(tmp_path, monkeypatch):
    """A DTFL record trained on the stacked backend (keyed as fedlib.dtfl.training.keyed_by_backend keys it on
    CUDA) is current: prune neither counts it stale nor deletes it."""
    from fedlib.lab.dtfl import experiments
    from fedlib.dtfl import training
    monkeypatch.setattr(training, "resolve_backend", lambda backend, device: "stacked")
    store, config, used = training.keyed_by_backend(experiments.result_store(str(tmp_path)), {"run": 1}, "cpu")
    assert used == "stacked" and config["backend"] == "stacked"
    store.save(config, {"acc": 0.5})
    report = prune.prune(tmp_path, delete=True)
    assert (report["current"], report["stale"], report["deleted"]) == (1, 0, 0)
    assert store.load(config)["acc"] == 0.5


def test_command_reports_json_and_rejects_a_missing_folder(tmp_path, capsys):
    ResultStore(tmp_path, code=("fedlib.core",)).save({"run": 1}, {"acc": 0.1})
    assert prune.main(["--dir", str(tmp_path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["stale"] == 1 and out["deleted"] == 0            # fedlib.core alone is no paper's store code
    assert prune.main(["--dir", str(tmp_path / "nope")]) == 2
    assert "no store folder" in capsys.readouterr().err
    with pytest.raises(FileNotFoundError, match="dir: no store folder"):
        prune.classify(tmp_path / "nope", set())


def test_a_misspelt_store_folder_is_refused_and_never_created(tmp_path, capsys):
    from fedlib.lab.prune import main
    for flags in ([], ["--rekey"], ["--rekey", "--delete"]):
        assert main(["--dir", str(tmp_path / "stor"), *flags]) == 2
        assert "no store folder" in capsys.readouterr().err
        assert not (tmp_path / "stor").exists()


def _newer_copy(store: ResultStore, config: dict) -> tuple:
    """The record of ``config`` rewritten as a newer fedlib would (schema + 1); returns (path, its bytes)."""
    from fedlib.lab.store import SCHEMA

    path = store.path(config)
    env = json.loads(path.read_text())
    env["schema"] = SCHEMA + 1
    path.write_text(json.dumps(env))
    return path, path.read_bytes()


def test_a_record_of_a_newer_fedlib_is_never_overwritten(tmp_path):
    # issue 70: a store shared with a newer checkout lost its records to a recompute (with a warning that read like
    # corruption); planted: _read treating a higher schema as corrupt again -> red
    from fedlib.lab.store import NewerRecordError

    store = ResultStore(tmp_path, code=("fedlib.data",))
    store.save({"run": 1}, {"acc": 0.7})
    path, before = _newer_copy(store, {"run": 1})
    ran = []
    for call in (lambda: store.get_or_run({"run": 1}, lambda: ran.append(1) or {"acc": 0.1}),
                 lambda: store.get_or_run({"run": 1}, lambda: ran.append(1) or {"acc": 0.1}, force=True),
                 lambda: store.load({"run": 1})):
        with pytest.raises(NewerRecordError, match=r"written by a newer fedlib \(record schema 2, this fedlib reads "
                                                   r"1\): upgrade, or use another cache folder"):
            call()
    assert ran == [] and path.read_bytes() == before


def test_prune_names_unreadable_files_and_leaves_newer_records(tmp_path):
    store = ResultStore(tmp_path, code=("fedlib.data",))
    store.save({"run": 1}, {"acc": 0.7})
    store.save({"run": 2}, {"acc": 0.6})
    path, before = _newer_copy(store, {"run": 2})
    (tmp_path / "broken.json").write_text("{not json")
    report = prune.prune(tmp_path, delete=True, current={"something else"})
    assert (report["stale"], report["newer"], report["unreadable"], report["deleted"]) == (1, 1, 1, 1)
    assert report["unreadable_files"] == ["broken.json"] and path.read_bytes() == before


def test_a_folder_of_foreign_json_is_no_store(tmp_path, capsys, monkeypatch):
    # issue 70: JSON files named like records but holding something else passed as a store
    for name in ("0a1b.json", "ff00.json"):
        (tmp_path / name).write_text(json.dumps({"accuracy": 0.9}))
    with pytest.raises(ValueError, match="is not a result store: none of its 2 JSON files is a fedlib record"):
        prune.prune(tmp_path)
    assert prune.main(["--dir", str(tmp_path), "--rekey"]) == 2
    assert "its JSON files are not fedlib records (e.g. 0a1b.json" in capsys.readouterr().err
    from fedlib.lab.cli import check_environment
    monkeypatch.setenv("FEDLIB_CACHE_DIR", str(tmp_path))
    with pytest.raises(ValueError, match="its JSON files are not fedlib records"):
        check_environment()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["0a1b.json", "ff00.json"]   # nothing changed
