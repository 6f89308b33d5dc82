"""CIFAR-10 from a copy as image files in class folders (``python -m fedlib.lab.data cifar10 --from-images PATH``):
the shared JPEG copy (``../shared/data/cifar-10-images.tar.gz``; skipped, saying why, where it is absent, as on a
user's fresh clone) imported into torchvision's layout and read back by ``load_dataset``, pixels checked against
the files decoded here by PIL; bad folders refused naming the file; nothing overwritten."""
import io
import json
import tarfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from fedlib.data import copy_label, load_dataset
from fedlib.lab import data as lab_data
from fedlib.lab import plotting

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "cifar-10-images.tar.gz"
needs_copy = pytest.mark.skipif(not SHARED.is_file(), reason=f"the shared CIFAR-10 JPEG copy is absent ({SHARED}): "
                                "a fresh clone has no ../shared; the loader's own checks run below on tiny folders")


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    root = tmp_path_factory.mktemp("cifar")
    lab_data.import_cifar10_images(SHARED, root)
    return root


def _pil(member: str) -> np.ndarray:
    with tarfile.open(SHARED) as tar:
        return np.asarray(Image.open(io.BytesIO(tar.extractfile(member).read())).convert("RGB"))


@needs_copy
def test_the_jpeg_copy_loads_as_cifar10_and_says_what_it_is(imported):
    ds = load_dataset("cifar10", root=imported)
    assert tuple(ds.x_train.shape) == (50000, 3, 32, 32) and tuple(ds.x_test.shape) == (10000, 3, 32, 32)
    assert np.bincount(ds.y_train.numpy()).tolist() == [5000] * 10
    assert np.bincount(ds.y_test.numpy()).tolist() == [1000] * 10
    assert ds.classes == lab_data.CIFAR10_CLASSES
    assert copy_label("cifar10", imported) == "CIFAR-10 (JPEG copy)"
    assert ds.source == f"CIFAR-10 (JPEG copy): torchvision files in {imported / 'cifar-10-batches-py'}"
    note = json.loads((imported / "cifar-10-batches-py" / "PROVENANCE.json").read_text())
    assert note["sha256"] == "4527e9cf0a3637c285ff304b788d8b1298b55605339089df4e10da9c0c6fe269"
    # a prefix holds every class (the written order is not class order): DTFL's "first n training samples"
    assert sorted(set(ds.y_train[:200].tolist())) == list(range(10))


@needs_copy
def test_pixels_and_labels_are_the_files_as_pil_decodes_them(imported):
    import pickle

    with (imported / "cifar-10-batches-py" / "data_batch_1").open("rb") as fh:
        batch = pickle.load(fh, encoding="latin1")
    for i in (0, 4321, 9999):
        name = batch["filenames"][i]                                # "<class>/<file>"
        cls = name.split("/")[0]
        assert batch["labels"][i] == lab_data.CIFAR10_CLASSES.index(cls)
        want = _pil(f"cifar-10-images/train/{name}")                # [32, 32, 3] uint8, decoded here
        assert np.array_equal(batch["data"][i].reshape(3, 32, 32).transpose(1, 2, 0), want)


@needs_copy
def test_an_import_never_overwrites(imported):
    with pytest.raises(ValueError, match="already holds batches.meta, data_batch_1"):
        lab_data.import_cifar10_images(SHARED, imported)


def _folder(root: Path, per: dict, size=(32, 32), cls=lab_data.CIFAR10_CLASSES, fmt="PNG") -> Path:
    for split, n in per.items():
        for c in cls:
            (root / "copy" / split / c).mkdir(parents=True, exist_ok=True)
            for k in range(n):
                Image.new("RGB", size, (k, 2 * k, 3)).save(root / "copy" / split / c / f"{k:04d}.png", fmt)
    return root / "copy"


def test_a_png_folder_is_read_in_its_fixed_order(tmp_path, monkeypatch):
    monkeypatch.setattr(lab_data, "PER_CLASS", {"train": 3, "test": 1})
    got = lab_data.read_class_folders(_folder(tmp_path, {"train": 3, "test": 1}))
    x, y, names = got["train"]
    assert got["format"] == "png" and x.shape == (30, 32, 32, 3) and np.bincount(y).tolist() == [3] * 10
    keys = sorted((c, f"{k:04d}.png") for c in lab_data.CIFAR10_CLASSES for k in range(3))
    order = np.random.Generator(np.random.PCG64(lab_data.ORDER_SEED)).permutation(30)
    assert names == [f"{keys[i][0]}/{keys[i][1]}" for i in order]   # the documented order, written out
    k = int(names[0].split("/")[1][:4])
    assert x[0, 5, 7].tolist() == [k, 2 * k, 3]


@pytest.mark.parametrize("case, words", [
    ("class", "class folder test/kitten is not a CIFAR-10 class"),
    ("size", "is 31 x 32, not 32 x 32"),
    ("count", "train must hold 2 images of each CIFAR-10 class"),
], ids=["class", "size", "count"])
def test_bad_folders_are_refused_naming_what_is_wrong(tmp_path, monkeypatch, case, words):
    monkeypatch.setattr(lab_data, "PER_CLASS", {"train": 2, "test": 1})
    if case == "class":
        folder = _folder(tmp_path, {"train": 2, "test": 1}, cls=("kitten",))
    elif case == "size":
        folder = _folder(tmp_path, {"train": 2, "test": 1}, size=(31, 32))
    else:
        folder = _folder(tmp_path, {"train": 1, "test": 1})
    with pytest.raises(ValueError, match=words):
        lab_data.read_class_folders(folder)


def test_the_command_refuses_from_images_for_another_dataset(capsys):
    with pytest.raises(SystemExit) as exit_:
        lab_data.main(["fashion-mnist", "--from-images", "x"])
    assert exit_.value.code == 2 and "--from-images: applies to cifar10 alone" in capsys.readouterr().err
    assert lab_data.main(["cifar10", "--from-images", "/no/such/folder"]) == 1
    assert "is neither a folder nor a .tar.gz" in capsys.readouterr().err


def _tiny_import(tmp_path, monkeypatch, fmt: str) -> Path:
    """A 3 + 1 images-per-class copy in ``fmt`` (JPEG or PNG) imported by the command's function into a data
    folder of its own, which the loaders then read by default (``FEDLIB_DATA_DIR``)."""
    monkeypatch.setattr(lab_data, "PER_CLASS", {"train": 3, "test": 1})
    folder = tmp_path / "copy"
    for split, n in (("train", 3), ("test", 1)):
        for c in lab_data.CIFAR10_CLASSES:
            (folder / split / c).mkdir(parents=True)
            for k in range(n):
                Image.new("RGB", (32, 32), (k, 2 * k, 3)).save(folder / split / c / f"{k:04d}.{fmt.lower()}", fmt)
    root = tmp_path / "data"
    monkeypatch.setenv("FEDLIB_DATA_DIR", str(root))
    lab_data.import_cifar10_images(folder, root)
    return root


@pytest.mark.parametrize("fmt, what", [("JPEG", "CIFAR-10 (JPEG copy)"), ("PNG", "CIFAR-10 (PNG copy)")])
def test_every_result_on_an_imported_copy_says_what_it_is(tmp_path, monkeypatch, fmt, what):
    """The loader's ``source`` (written into every record and metrics file as ``data_source``) and the figures'
    provenance caption lead with the copy's label; without the import's note they name the files alone."""
    import matplotlib.pyplot as plt

    root = _tiny_import(tmp_path, monkeypatch, fmt)
    folder = root / "cifar-10-batches-py"
    ds = load_dataset("cifar10")
    assert ds.source == f"{what}: torchvision files in {folder}" and len(ds.y_train) == 30
    assert copy_label("cifar10") == what and plotting.dataset_label("cifar10") == what
    monkeypatch.delenv("FEDLIB_NO_FOOTER", raising=False)
    fig = plt.figure()
    plotting.caption(fig, "cifar10", "smoke")
    assert fig.texts[0].get_text().startswith(f"dataset: {what} · profile: smoke")
    plt.close(fig)
    (folder / "PROVENANCE.json").unlink()                  # the original archive has no note
    assert load_dataset("cifar10").source == f"torchvision files in {folder}"
    assert copy_label("cifar10") is None and plotting.dataset_label("cifar10") == "cifar10"
    assert plotting.dataset_label("fashion-mnist") == "fashion-mnist"


def test_a_broken_note_names_no_copy(tmp_path, monkeypatch):
    root = _tiny_import(tmp_path, monkeypatch, "JPEG")
    (root / "cifar-10-batches-py" / "PROVENANCE.json").write_text("{not json")
    assert copy_label("cifar10", root) is None
    assert load_dataset("cifar10", root=root).source.startswith("torchvision files in ")
