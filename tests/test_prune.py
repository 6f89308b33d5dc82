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
