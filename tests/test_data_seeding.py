"""Data loading (real Fashion-MNIST, missing-data error) and seed streams."""
import numpy as np
import pytest
import torch

from fedlib.core import seeding
from fedlib.lab import data as data_cli
from fedlib.data import datasets as data


def test_fashion_mnist_shapes_and_normalisation(fmnist):
    assert fmnist.x_train.shape == (60000, 1, 28, 28) and fmnist.x_test.shape == (10000, 1, 28, 28)
    assert torch.bincount(fmnist.y_train).tolist() == [6000] * 10
    assert fmnist.x_train.min() == -1.0 and fmnist.x_train.max() == 1.0   # (x/255 - 0.5) / 0.5
    assert fmnist.num_classes == 10 and fmnist.classes[0] == "T-shirt/top"


def test_missing_dataset_says_how_to_install(tmp_path):
    with pytest.raises(data.DatasetNotFoundError) as err:
        data.load_fashion_mnist(root=tmp_path, debian_dir=tmp_path / "nowhere")
    assert "apt-get install -y dataset-fashion-mnist" in str(err.value)
    with pytest.raises(ValueError, match="dataset must be one of"):
        data.load_dataset("mnist-but-not")


def test_cli_exit_code_when_missing(tmp_path, capsys):
    assert data_cli.main(["fashion-mnist", "--root", str(tmp_path), "--debian-dir", str(tmp_path / "nowhere")]) == 1
    assert "apt-get install" in capsys.readouterr().err


def test_streams_are_reproducible_and_independent():
    a = seeding.numpy_rng(3, "data").random(4)
    assert np.array_equal(a, seeding.numpy_rng(3, "data").random(4))
    assert not np.array_equal(a, seeding.numpy_rng(3, "model").random(4))
    assert not np.array_equal(a, seeding.numpy_rng(4, "data").random(4))
    g1, g2 = seeding.torch_generator(3, "model"), seeding.torch_generator(3, "model")
    assert torch.equal(torch.rand(3, generator=g1), torch.rand(3, generator=g2))
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        seeding.seed_sequence(-1, "data")
    assert seeding.resolve_device("cpu").type == "cpu"


def _write_cifar(root, name, n_per_batch=4):
    """Tiny CIFAR files in the real on-disk format (pickled dicts of uint8 rows of 3072 bytes)."""
    import pickle

    reader, _, _, _ = data.CIFAR[name]
    folder = root / reader.base_folder
    folder.mkdir(parents=True)
    rng = np.random.default_rng(0)
    classes = 10 if name == "cifar10" else 100
    key = "labels" if name == "cifar10" else "fine_labels"
    for fname, _ in reader.train_list + reader.test_list:
        entry = {"data": rng.integers(0, 256, (n_per_batch, 3072), dtype=np.uint8),
                 key: rng.integers(0, classes, n_per_batch).tolist()}
        (folder / fname).write_bytes(pickle.dumps(entry))
    meta_key = reader.meta["key"]
    (folder / reader.meta["filename"]).write_bytes(pickle.dumps({meta_key: [f"c{i}" for i in range(classes)]}))
    return folder


@pytest.mark.parametrize("name,train_batches,classes", [("cifar10", 5, 10), ("cifar100", 1, 100)])
def test_cifar_loader_on_tiny_real_format_files(tmp_path, name, train_batches, classes):
    assert not data.cifar_available(name, tmp_path)
    with pytest.raises(data.DatasetNotFoundError, match="cannot be downloaded on this machine"):
        data.load_cifar(name, tmp_path)
    folder = _write_cifar(tmp_path, name)
    ds = data.load_dataset(name, root=tmp_path)
    assert ds.x_train.shape == (4 * train_batches, 3, 32, 32) and ds.x_test.shape == (4, 3, 32, 32)
    assert ds.num_classes == classes and ds.y_train.dtype == torch.int64
    # pixel (row 0, channel 0, first pixel) normalised with the channel's mean and std
    import pickle
    first = pickle.loads((folder / data.CIFAR[name][0].train_list[0][0]).read_bytes())["data"][0, 0]
    mean, std = data.CIFAR[name][2][0], data.CIFAR[name][3][0]
    assert float(ds.x_train[0, 0, 0, 0]) == pytest.approx((first / 255 - mean) / std, rel=1e-5)
