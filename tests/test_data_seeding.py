"""Data loading (real Fashion-MNIST, missing-data error) and seed streams."""
import numpy as np
import pytest
import torch

from fedlib import data, seeding


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
    assert data.main(["fashion-mnist", "--root", str(tmp_path), "--debian-dir", str(tmp_path / "nowhere")]) == 1
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
