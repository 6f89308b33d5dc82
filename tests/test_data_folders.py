"""CINIC-10 and HAM10000 loaders (fedlib.data.folders) on tiny datasets written in the real on-disk formats."""
import csv

import numpy as np
import pytest
import torch
from PIL import Image

from fedlib.core.validate import ParameterTypeError
from fedlib.lab import data as data_cli
from fedlib.data import datasets as data
from fedlib.data import folders

CINIC_PER_CLASS = {"train": 2, "valid": 1, "test": 1}
HAM_ROWS = [  # lesion_id, image_id, dx, part: HAM_0000001 has two images (one in each part folder)
    ("HAM_0000001", "ISIC_0024306", "mel", 1), ("HAM_0000001", "ISIC_0024307", "mel", 2),
    ("HAM_0000002", "ISIC_0024308", "nv", 1), ("HAM_0000003", "ISIC_0024309", "bkl", 2),
    ("HAM_0000004", "ISIC_0024310", "akiec", 1), ("HAM_0000005", "ISIC_0024311", "vasc", 2),
]


def _cinic_colour(split: str, c: int, i: int) -> tuple[int, int, int]:
    return (10 * c + i, 100 + 5 * c, {"train": 200, "valid": 220, "test": 240}[split] + i)


def _write_cinic(root, grey_test_airplane=False):
    """<root>/cinic-10/{train,valid,test}/<class>/*.png: constant-colour 32x32 RGB PNGs (names as the real ones)."""
    for split, n in CINIC_PER_CLASS.items():
        for c, name in enumerate(folders.CINIC10_CLASSES):
            d = root / "cinic-10" / split / name
            d.mkdir(parents=True)
            for i in range(n):
                Image.new("RGB", (32, 32), _cinic_colour(split, c, i)).save(d / f"n0000{c}_{i}.png")
    if grey_test_airplane:
        Image.new("L", (32, 32), 77).save(root / "cinic-10" / "test" / "airplane" / "cifar10-test-0.png")
    return root / "cinic-10"


def _ham_colour(k: int) -> tuple[int, int, int]:
    return (20 + 30 * k, 200 - 25 * k, (90, 140, 60, 180, 120, 30)[k])


def _write_ham(root, rows=HAM_ROWS):
    """<root>/ham10000/HAM10000_metadata.csv (real header) + 600x450 constant-colour JPEGs in part_1 / part_2."""
    folder = root / "ham10000"
    for d in folders.HAM10000_IMAGE_DIRS:
        (folder / d).mkdir(parents=True)
    with open(folder / "HAM10000_metadata.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["lesion_id", "image_id", "dx", "dx_type", "age", "sex", "localization"])
        for k, (lesion, image, dx, part) in enumerate(rows):
            w.writerow([lesion, image, dx, "histo", "80.0", "male", "scalp"])
            Image.new("RGB", (600, 450), _ham_colour(k)).save(
                folder / folders.HAM10000_IMAGE_DIRS[part - 1] / f"{image}.jpg", quality=100)
    return folder


def test_cinic10_shapes_labels_and_normalisation(tmp_path):
    _write_cinic(tmp_path)
    assert folders.cinic10_available(tmp_path)
    ds = data.load_dataset("cinic10", root=tmp_path)
    assert ds.name == "cinic10" and ds.classes == folders.CINIC10_CLASSES and ds.num_classes == 10
    assert ds.x_train.shape == (20, 3, 32, 32) and ds.x_test.shape == (10, 3, 32, 32)
    assert ds.x_train.dtype == torch.float32 and ds.y_train.dtype == torch.int64
    assert ds.y_train.tolist() == [c for c in range(10) for _ in range(2)]   # class folders in alphabetical order
    assert ds.y_test.tolist() == list(range(10))
    mean, std = (torch.tensor(v).view(3, 1, 1) for v in folders.CINIC10_MEAN_STD)
    for n, (c, i) in enumerate((c, i) for c in range(10) for i in range(2)):   # PNG is lossless: exact pixels
        expected = (torch.tensor(_cinic_colour("train", c, i), dtype=torch.float32).view(3, 1, 1) / 255 - mean) / std
        assert torch.allclose(ds.x_train[n], expected.expand(3, 32, 32), atol=1e-5)
    truck = (torch.tensor(_cinic_colour("test", 9, 0)) / 255 - torch.tensor(folders.CINIC10_MEAN_STD[0])) \
        / torch.tensor(folders.CINIC10_MEAN_STD[1])
    assert torch.allclose(ds.x_test[9, :, 5, 7], truck, atol=1e-5)
    both = folders.load_cinic10(tmp_path, use_valid=True)
    assert both.x_train.shape == (30, 3, 32, 32) and torch.equal(both.x_train[:20], ds.x_train)
    assert both.y_train[20:].tolist() == list(range(10)) and torch.equal(both.x_test, ds.x_test)


def test_cinic10_grey_image_becomes_rgb(tmp_path):
    _write_cinic(tmp_path, grey_test_airplane=True)
    ds = folders.load_cinic10(tmp_path)
    assert ds.x_test.shape == (11, 3, 32, 32) and ds.y_test.tolist()[:2] == [0, 0]
    grey = (77 / 255 - torch.tensor(folders.CINIC10_MEAN_STD[0])) / torch.tensor(folders.CINIC10_MEAN_STD[1])
    assert torch.allclose(ds.x_test[0, :, 0, 0], grey, atol=1e-5)   # "cifar10-test-0" sorts first


def test_cinic10_errors(tmp_path):
    with pytest.raises(data.DatasetNotFoundError) as err:
        folders.load_cinic10(tmp_path)
    msg = str(err.value)
    assert str(tmp_path / "cinic-10") in msg and "cannot be downloaded" in msg and "CINIC-10.tar.gz" in msg
    assert not folders.cinic10_available(tmp_path)
    cinic = _write_cinic(tmp_path)
    with pytest.raises(ParameterTypeError, match="use_valid must be True or False"):
        folders.load_cinic10(tmp_path, use_valid=1)
    (cinic / "test" / "ship").rename(cinic / "test" / "boat")
    assert not folders.cinic10_available(tmp_path)
    with pytest.raises(data.DatasetNotFoundError, match=r"exactly the class folders .*found .*'boat'"):
        folders.load_cinic10(tmp_path)
    (cinic / "test" / "boat").rename(cinic / "test" / "ship")
    Image.new("RGB", (32, 31)).save(cinic / "train" / "dog" / "odd.png")
    with pytest.raises(data.DatasetNotFoundError, match=r"odd\.png is 32x31, not 32x32"):
        folders.load_cinic10(tmp_path)
    (cinic / "train" / "dog" / "odd.png").unlink()
    for f in (cinic / "test" / "frog").iterdir():
        f.unlink()
    with pytest.raises(data.DatasetNotFoundError, match="frog"):
        folders.load_cinic10(tmp_path)


def test_lesion_split_groups_lesions_and_is_deterministic():
    ids = [f"HAM_{k // 3:07d}" for k in range(150)]   # 50 lesions of 3 images
    train, test = folders.lesion_split(ids, 0.2, seed=4)
    assert len(test) == 30 and len(train) == 120 and sorted(np.r_[train, test].tolist()) == list(range(150))
    assert not {ids[i] for i in train} & {ids[i] for i in test}
    again = folders.lesion_split(ids, 0.2, seed=4)
    assert np.array_equal(again[1], test) and np.array_equal(again[0], train)
    assert not np.array_equal(folders.lesion_split(ids, 0.2, seed=5)[1], test)
    assert len(folders.lesion_split(ids[:6], 0.01, 0)[1]) == 3   # at least one lesion on each side
    assert len(folders.lesion_split(ids[:6], 0.99, 0)[0]) == 3
    with pytest.raises(ValueError, match=r"test_fraction must be > 0 and < 1"):
        folders.lesion_split(ids, 1.0)
    with pytest.raises(ValueError, match="at least 2 lesions"):
        folders.lesion_split(["HAM_1", "HAM_1"])


def test_ham10000_shapes_labels_split_and_normalisation(tmp_path):
    _write_ham(tmp_path)
    assert folders.ham10000_available(tmp_path)
    lesions = [r[0] for r in HAM_ROWS]
    # the colours as decoded (JPEG shifts them by a few levels); a constant image stays constant when resized
    colours = torch.tensor([Image.open(p).getpixel((300, 200)) for p in
                            (tmp_path / "ham10000" / f"HAM10000_images_part_{part}" / f"{image}.jpg"
                             for _, image, _, part in HAM_ROWS)], dtype=torch.float64) / 255
    assert torch.allclose(colours * 255, torch.tensor([_ham_colour(k) for k in range(6)], dtype=torch.float64),
                          atol=8)
    for seed in range(6):
        ds = data.load_dataset("ham10000", root=tmp_path, seed=seed)
        train_idx, test_idx = folders.lesion_split(lesions, 0.2, seed)
        assert len(test_idx) == (2 if lesions[test_idx[0]] == "HAM_0000001" else 1)   # round(0.2 * 5) lesions
        assert {0, 1} <= set(train_idx.tolist()) or {0, 1} <= set(test_idx.tolist())  # the 2-image lesion
        assert ds.x_train.shape == (len(train_idx), 3, 32, 32) and ds.x_test.shape == (len(test_idx), 3, 32, 32)
        assert ds.x_train.dtype == torch.float32 and ds.y_test.dtype == torch.int64
        dx_index = {"akiec": 0, "bcc": 1, "bkl": 2, "df": 3, "mel": 4, "nv": 5, "vasc": 6}
        assert ds.y_train.tolist() == [dx_index[HAM_ROWS[i][2]] for i in train_idx]
        assert ds.y_test.tolist() == [dx_index[HAM_ROWS[i][2]] for i in test_idx]
        # normalised with the training images' statistics: constant images -> per-channel mean/std of the colours
        mean, std = colours[train_idx].mean(0), colours[train_idx].std(0, unbiased=False)
        for split, idx in ((ds.x_train, train_idx), (ds.x_test, test_idx)):
            expected = ((colours[idx] - mean) / std).float()[:, :, None, None].expand(-1, 3, 32, 32)
            assert torch.allclose(split, expected, atol=1e-4)
        assert torch.allclose(ds.x_train.mean(dim=(0, 2, 3)), torch.zeros(3), atol=1e-4)
        assert torch.allclose(ds.x_train.std(dim=(0, 2, 3), unbiased=False), torch.ones(3), atol=1e-3)
    assert ds.classes == ("akiec", "bcc", "bkl", "df", "mel", "nv", "vasc") and ds.num_classes == 7
    a, b = folders.load_ham10000(tmp_path, seed=3), folders.load_ham10000(tmp_path, seed=3)
    assert torch.equal(a.x_test, b.x_test) and torch.equal(a.y_train, b.y_train)
    big = folders.load_ham10000(tmp_path, image_size=16, test_fraction=0.5)
    assert big.x_train.shape[1:] == (3, 16, 16) and len(big.y_test) + len(big.y_train) == 6
    assert len({HAM_ROWS[i][0] for i in folders.lesion_split(lesions, 0.5, 0)[1]}) == 2   # round(2.5) = 2


def test_ham10000_errors(tmp_path):
    with pytest.raises(data.DatasetNotFoundError) as err:
        folders.load_ham10000(tmp_path)
    msg = str(err.value)
    assert "HAM10000_metadata.csv" in msg and "cannot be downloaded" in msg and str(tmp_path / "ham10000") in msg
    assert not folders.ham10000_available(tmp_path)
    folder = _write_ham(tmp_path)
    (folder / "HAM10000_images_part_2" / "ISIC_0024309.jpg").unlink()
    with pytest.raises(data.DatasetNotFoundError, match=r"ISIC_0024309\.jpg is in neither .*HAM10000_images_part_1"):
        folders.load_ham10000(tmp_path)
    bad = tmp_path / "bad"
    _write_ham(bad, HAM_ROWS[:3] + [("HAM_0000009", "ISIC_0000001", "melanoma", 1)])
    with pytest.raises(data.DatasetNotFoundError, match=r"line 5: dx 'melanoma' .*not a HAM10000 diagnosis"):
        folders.load_ham10000(bad)
    with pytest.raises(ValueError, match="image_size must be a positive integer"):
        folders.load_ham10000(tmp_path, image_size=0)
    with pytest.raises(ValueError, match="test_fraction must be > 0 and < 1"):
        folders.load_ham10000(tmp_path, test_fraction=0.0)


def test_load_dataset_keywords_and_cli(tmp_path, capsys):
    with pytest.raises(ParameterTypeError, match=r"load_dataset\('cinic10'\) got unknown keyword\(s\) \['seed'\]"):
        data.load_dataset("cinic10", root=tmp_path, seed=0)
    with pytest.raises(ParameterTypeError, match=r"\['use_valid'\]; allowed: \['image_size', 'root', 'seed', "):
        data.load_dataset("ham10000", root=tmp_path, use_valid=True)
    with pytest.raises(ParameterTypeError, match=r"\['allow_download'\]"):
        data.load_dataset("cinic10", allow_download=False)
    assert data_cli.main(["cinic10", "--root", str(tmp_path)]) == 1
    assert "CINIC-10.tar.gz" in capsys.readouterr().err
    assert data_cli.main(["ham10000", "--root", str(tmp_path)]) == 1
    assert "HAM10000_metadata.csv" in capsys.readouterr().err
    _write_cinic(tmp_path)
    assert data_cli.main(["cinic10", "--root", str(tmp_path)]) == 0
    assert f"image folders in {tmp_path / 'cinic-10'}" in capsys.readouterr().out


def test_dtfl_shapes_match_the_loaders(tmp_path):
    from fedlib.lab.dtfl.experiments import DATASET_SHAPES, resolve_dataset

    _write_cinic(tmp_path)
    _write_ham(tmp_path)
    for name in ("cinic10", "ham10000"):
        ds = data.load_dataset(name, root=tmp_path)
        assert DATASET_SHAPES[name] == (ds.x_train.shape[1], ds.x_train.shape[2], ds.num_classes)
        assert resolve_dataset(name) == name
    assert resolve_dataset("auto") == ("cifar10" if data.cifar_available("cifar10") else "fashion-mnist")


def test_one_dataset_shape_table_shared_by_the_papers(tmp_path, monkeypatch):
    import fedlib.data
    from fedlib.data import shapes
    from fedlib.lab.dtfl import experiments as dtfl_x
    from fedlib.lab.hasfl.runs import experiments as hasfl_x
    assert set(shapes.DATASET_SHAPES) == set(data.DATASETS)      # every loadable dataset has its shape
    assert dtfl_x.DATASET_SHAPES is hasfl_x.DATASET_SHAPES is fedlib.data.DATASET_SHAPES
    monkeypatch.setenv("FEDLIB_DATA_DIR", str(tmp_path))         # nothing on disk: "auto" falls back
    assert [shapes.dataset_available(n) for n in ("cifar10", "cinic10", "fashion-mnist")] == [False, False, True]
    assert hasfl_x.resolve_dataset("auto", "resnet18") == dtfl_x.resolve_dataset("auto") == "fashion-mnist"
    _write_cinic(tmp_path)
    assert shapes.resolve_dataset("auto", "cinic10") == "cinic10"
    assert hasfl_x.resolve_dataset("cifar100", "vgg16") == dtfl_x.resolve_dataset("cifar100") == "cifar100"
    with pytest.raises(ValueError, match="dataset must be one of .'auto', 'fashion-mnist'"):
        dtfl_x.resolve_dataset("mnist")
    with pytest.raises(ParameterTypeError):
        hasfl_x.resolve_dataset(10, "vgg16")
    with pytest.raises(ValueError, match="model must be one of"):
        hasfl_x.resolve_dataset("auto", "resnet20")
