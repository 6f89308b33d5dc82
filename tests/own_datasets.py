"""Datasets of a user's own, as a researcher would write them in a module of their own (imported by path in the
tests: ``"own_datasets:flipped"``): small subsets of the real Fashion-MNIST; not a test module."""
import functools

import torch

from fedlib.data import TensorDataset, load_fashion_mnist


@functools.lru_cache(maxsize=1)
def _fmnist():
    return load_fashion_mnist()


def _subset(name, images, n_train=300, n_test=100, labels=None):
    ds = _fmnist()
    y_train = ds.y_train[:n_train] if labels is None else labels(ds.y_train[:n_train])
    return TensorDataset(name, images(ds.x_train[:n_train]), y_train, images(ds.x_test[:n_test]),
                         ds.y_test[:n_test], ds.classes, f"first {n_train} / {n_test} images of {ds.source}")


def first_300():
    """The first 300 training and 100 test images of Fashion-MNIST, as they are."""
    return _subset("fmnist-300", lambda x: x)


def flipped():
    """The same images, mirrored left to right (another dataset of the same shape and classes)."""
    return _subset("fmnist-300-flipped", lambda x: torch.flip(x, dims=[3]))


def tiny_images():
    """Broken for ResNets: 4x4 images (the first 4x4 pixels' corner)."""
    return _subset("corner", lambda x: x[:, :, :4, :4].contiguous())


def not_square():
    """Broken: 28 x 20 images."""
    return _subset("cropped", lambda x: x[:, :, :, :20].contiguous())


def float64_images():
    """Broken: float64 inputs."""
    return _subset("f64", lambda x: x.double())


def labels_out_of_range():
    """Broken: labels 1..10 for 10 classes."""
    return _subset("shifted", lambda x: x, labels=lambda y: y + 1)


def not_a_dataset():
    """Broken: a dict instead of a TensorDataset."""
    return {"x_train": torch.zeros(2, 1, 28, 28)}


def noisy():
    """Broken: noise drawn from no fixed seed (another dataset at every load)."""
    return _subset("noisy", lambda x: x + 0.1 * torch.randn(x.shape))


NOT_CALLABLE = 3
