"""Two modules of the same name in two folders, met in one process (issue 70, item 1): a component of your own
runs the file the current ``sys.path`` imports, keyed by that file's source.

Measured before the fix (``shadow_mod.py`` in folders ``a`` and ``b``, ``a`` on the path first, then ``b``):
:func:`fedlib.lab.own_components.load_own` and ``check_own`` returned ``a``'s function, keyed by ``a``'s source,
with no word; when ``a``'s module had been imported by something else, ``b``'s function ran under ``a``'s key
(:func:`fedlib.lab.store.path_key` too: the file list of ``source_hash`` is cached per module name). Planted:
:func:`fedlib.lab.own_components.follow_path` doing nothing -> every test here red."""
import importlib
import sys
import textwrap
from pathlib import Path

import pytest

from fedlib.core.components import resolve
from fedlib.lab import own_components
from fedlib.lab.code_hash import source_hash
from fedlib.lab.store import path_key

SOURCE = """
    LETTER = {letter!r}

    def fn():
        return LETTER
"""


@pytest.fixture
def folders(tmp_path, monkeypatch):
    """Folders ``a`` and ``b``, each with ``shadow_mod.py`` and package ``shadow_pkg`` (module ``mod``) whose
    ``fn()`` returns the folder's letter, and ``shadow_ref_<letter>.py``, the same source under another name (the
    hash has no file names: its hash is the key expected). Nothing is on ``sys.path`` yet."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    made = {}
    for letter in "ab":
        folder = tmp_path / letter
        (folder / "shadow_pkg").mkdir(parents=True)
        text = textwrap.dedent(SOURCE.format(letter=letter))
        (folder / "shadow_mod.py").write_text(text)
        (folder / "shadow_pkg" / "__init__.py").write_text("")
        (folder / "shadow_pkg" / "mod.py").write_text(text)
        (tmp_path / f"shadow_ref_{letter}.py").write_text(text)
        made[letter] = str(folder)
    sys.path.insert(0, str(tmp_path))
    importlib.invalidate_caches()
    yield made
    for name in [n for n in sys.modules if n.startswith("shadow_")]:
        sys.modules.pop(name)
    own_components._LOADED.clear()
    source_hash.cache_clear()


def _use(folder: str) -> None:
    """``folder`` first on ``sys.path``, the other folder off it (a notebook in another folder)."""
    sys.path[:] = [p for p in sys.path if not p.endswith(("/a", "/b"))]
    sys.path.insert(0, folder)
    importlib.invalidate_caches()


@pytest.mark.parametrize("path", ["shadow_mod:fn", "shadow_pkg.mod:fn"])
def test_load_own_runs_and_keys_the_file_of_the_current_path(folders, path):
    code_a, code_b = source_hash(["shadow_ref_a"]), source_hash(["shadow_ref_b"])
    assert code_a != code_b
    _use(folders["a"])
    fn, code = own_components.load_own(path, "thing")
    assert (fn(), code, path_key(path)["code"]) == ("a", code_a, code_a)
    _use(folders["b"])                                        # the other folder's notebook, same process
    fn, code = own_components.load_own(path, "thing")
    assert (fn(), code, path_key(path)["code"]) == ("b", code_b, code_b)
    assert resolve(path, "thing")() == "b"                  # what the method layer then runs
    _use(folders["a"])                                        # and back
    fn, code = own_components.load_own(path, "thing")
    assert (fn(), code, path_key(path)["code"]) == ("a", code_a, code_a)


def test_a_module_imported_by_something_else_is_keyed_by_the_file_that_runs(folders):
    _use(folders["a"])
    import shadow_mod                                         # noqa: F401  (an earlier user in the process)
    _use(folders["b"])
    fn, code = own_components.load_own("shadow_mod:fn", "thing")
    assert (fn(), code, path_key("shadow_mod:fn")["code"]) == ("b", source_hash(["shadow_ref_b"]),
                                                               source_hash(["shadow_ref_b"]))


def test_check_own_and_reimport_give_the_file_of_the_current_path(folders):
    _use(folders["a"])
    assert own_components.check_own("shadow_mod:fn", "thing", "shadow_mod:fn")() == "a"
    _use(folders["b"])
    assert own_components.check_own("shadow_mod:fn", "thing", "shadow_mod:fn")() == "b"
    _use(folders["a"])
    assert own_components.reimport("shadow_mod:fn", "thing")() == "a"
    assert own_components.follow_path("shadow_mod") is None  # held from the file of now: left as it is


def test_follow_path_names_both_files_and_keeps_the_first_of_two_on_the_path(folders):
    _use(folders["a"])
    own_components.load_own("shadow_mod:fn", "thing")
    sys.path.insert(1, folders["b"])                           # both on the path: Python imports a's
    assert own_components.follow_path("shadow_mod") is None
    _use(folders["b"])
    held, now = own_components.follow_path("shadow_mod")
    assert (held, now) == (f"{folders['a']}/shadow_mod.py", f"{folders['b']}/shadow_mod.py")
    assert "shadow_mod" not in sys.modules and own_components._LOADED == {}


DATASET = """
    from own_datasets import {fn} as _load

    def load():
        return _load()
"""


def test_a_dataset_of_your_own_loads_the_file_of_the_current_path(folders):
    import torch

    from fedlib.lab import datasets
    from own_datasets import first_300, flipped
    for letter, fn in (("a", "first_300"), ("b", "flipped")):
        (Path(folders[letter]) / "shadow_data.py").write_text(textwrap.dedent(DATASET.format(fn=fn)))
        (Path(folders[letter]).parent / f"shadow_ref_data_{letter}.py").write_text(
            textwrap.dedent(DATASET.format(fn=fn)))
    importlib.invalidate_caches()
    try:
        for letter, want in (("a", first_300()), ("b", flipped())):
            _use(folders[letter])
            assert torch.equal(datasets.use_dataset("shadow_data:load").x_train, want.x_train)
            assert datasets.dataset_key("shadow_data:load")["own_dataset"]["code"] == \
                source_hash([f"shadow_ref_data_{letter}"])
    finally:
        for table in (datasets._LOADED, datasets.DATASETS, datasets.DATASET_KEYWORDS, datasets.DATASET_SHAPES):
            table.pop("shadow_data:load", None)


def test_a_kernel_that_changes_folder_runs_each_folders_file(folders, monkeypatch):
    """A notebook kernel's path holds ``""`` (its working folder): a second notebook's folder is another file."""
    _use("")
    for letter in "aba":
        monkeypatch.chdir(folders[letter])
        fn, code = own_components.load_own("shadow_mod:fn", "thing")
        assert (fn(), code) == (letter, source_hash([f"shadow_ref_{letter}"]))


def test_the_hash_reads_the_file_of_the_module_held_when_another_folders_was_hashed_first(folders):
    """``a``'s module hashed (its file list cached), then dropped and ``b``'s imported by the user's own code, with
    no ``follow_path`` in between (nothing held from another file is left to drop): the hash is ``b``'s, the source
    that runs. Before: the cached list still named ``a``'s file, so a record computed by ``b``'s code was keyed by
    ``a``'s source. Planted: ``fedlib.lab.code_hash._files_run`` returning the cached list unchecked -> red."""
    _use(folders["a"])
    import shadow_mod
    assert shadow_mod.fn() == "a" and source_hash(["shadow_mod"]) == source_hash(["shadow_ref_a"])
    sys.modules.pop("shadow_mod")
    _use(folders["b"])
    import shadow_mod                                            # noqa: F811 (b's, imported anew)
    assert shadow_mod.fn() == "b"
    assert source_hash(["shadow_mod"]) == source_hash(["shadow_ref_b"])
