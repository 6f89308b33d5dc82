"""``dtfl_your_method`` at smoke trains every run on the worked split model of your own (issue 71, item 7):
``notebooks/dtfl/my_model.py``, named ``"my_model:small_cnn"`` by the smoke profile. Each record's config names the
path and is keyed by the module's source; the records computed in the smoke profile's two worker processes equal,
key for key and value for value, those computed in the kernel's own process (``workers = 1``).

Planted once and seen red: the notebook ignoring ``model`` (its Setup built with ``"resnet20"``)."""
import json
import sys
from pathlib import Path


ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "dtfl" / "dtfl_your_method.ipynb"


def _run(tmp_path, monkeypatch, name: str, **extra) -> dict:
    """The notebook at the smoke profile (plus ``extra``) into a store of its own: ``{file name: record}``."""
    import papermill as pm

    from fedlib.lab.notebooks import kernel_name, notebook_parameters
    (tmp_path / name).mkdir()
    monkeypatch.setenv("FEDLIB_CACHE_DIR", str(tmp_path / name / "cache"))     # kept out of the repository's .cache
    monkeypatch.setenv("FEDLIB_FIGURES_DIR", str(tmp_path / name / "figures"))
    pm.execute_notebook(str(NOTEBOOK), str(tmp_path / name / "out.ipynb"), kernel_name=kernel_name(),
                        parameters={**notebook_parameters(NOTEBOOK, "smoke"), **extra}, cwd=str(NOTEBOOK.parent),
                        progress_bar=False, log_output=False)
    return {p.name: json.loads(p.read_text()) for p in (tmp_path / name / "cache").rglob("*.json")}


def _same_but_wall_time(a: dict, b: dict) -> bool:
    return {k: v for k, v in a.items() if k != "elapsed_s"} == {k: v for k, v in b.items() if k != "elapsed_s"}


def test_the_smoke_run_trains_your_model_keyed_by_its_source_the_same_in_workers_and_in_one_process(
        tmp_path, monkeypatch):
    from fedlib.lab.code_hash import source_hash
    from fedlib.lab.notebooks import notebook_parameters

    smoke = notebook_parameters(NOTEBOOK, "smoke")
    assert smoke["model"] == "my_model:small_cnn" and smoke["workers"] == 2     # 4 runs over 2 spawned workers
    in_workers = _run(tmp_path, monkeypatch, "workers")
    monkeypatch.syspath_prepend(str(NOTEBOOK.parent))
    try:
        code = source_hash(["my_model"])
    finally:
        sys.modules.pop("my_model", None)
    # DTFL with its scheduler and with yours, FedAvg, and FedAvgM (the smoke profile's baseline), all on my_model
    assert sorted(r["config"]["kind"] for r in in_workers.values()) == [
        "dtfl_baseline", "dtfl_own_baseline", "dtfl_train", "dtfl_train"]
    for rec in in_workers.values():
        assert rec["config"]["model"] == "my_model:small_cnn"
        assert rec["config"]["own_model"] == {"path": "my_model:small_cnn", "code": code}
    here = _run(tmp_path, monkeypatch, "here", workers=1)
    assert set(here) == set(in_workers)                                           # the same keys
    for name, rec in here.items():
        assert rec["config"] == in_workers[name]["config"]
        assert _same_but_wall_time(rec["record"], in_workers[name]["record"]), rec["config"]["kind"]
