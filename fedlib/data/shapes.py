"""Input shape and classes of every dataset :func:`fedlib.data.load_dataset` loads, and the notebooks' ``"auto"``
dataset choice (the paper's dataset when it is on disk, else Fashion-MNIST). Shared by HASFL and DTFL, which build
their models from these shapes."""
from __future__ import annotations

from ..core.validate import ParameterTypeError
from .datasets import cifar_available
from .folders import cinic10_available, ham10000_available

#: dataset -> (input channels, image side in pixels, classes) of the tensors its loader returns (HAM10000 at
#: :func:`fedlib.data.load_ham10000`'s default ``image_size=32``)
DATASET_SHAPES = {"fashion-mnist": (1, 28, 10), "cifar10": (3, 32, 10), "cifar100": (3, 32, 100),
                  "cinic10": (3, 32, 10), "ham10000": (3, 32, 7)}

#: the dataset ``"auto"`` falls back to when the paper's is not on disk
FALLBACK_DATASET = "fashion-mnist"

_AVAILABLE = {"cifar10": lambda: cifar_available("cifar10"), "cifar100": lambda: cifar_available("cifar100"),
              "cinic10": cinic10_available, "ham10000": ham10000_available}


def dataset_available(name: str) -> bool:
    """Whether dataset ``name`` (a key of :data:`DATASET_SHAPES`) is on disk in the data folder
    (:func:`fedlib.data.datasets.data_dir`); the fallback Fashion-MNIST counts as available (its loader finds or
    prepares it). Raises ``ValueError`` for an unknown name."""
    _check_name("dataset", name)
    return name == FALLBACK_DATASET or _AVAILABLE[name]()


def resolve_dataset(dataset: str, paper_dataset: str) -> str:
    """The dataset a notebook runs: ``"auto"`` -> ``paper_dataset`` when :func:`dataset_available`, else
    :data:`FALLBACK_DATASET` (``"fashion-mnist"``); any other name is checked and returned unchanged.

    Args:
        dataset: ``"auto"`` or a key of :data:`DATASET_SHAPES`. paper_dataset: the paper's dataset (a key).

    Raises:
        ParameterTypeError: ``dataset`` or ``paper_dataset`` is not a string.
        ValueError: an unknown name (the message lists the known ones).
    """
    _check_name("paper_dataset", paper_dataset)
    if dataset == "auto":
        return paper_dataset if dataset_available(paper_dataset) else FALLBACK_DATASET
    return _check_name("dataset", dataset, auto=True)


def _check_name(what: str, name, auto: bool = False) -> str:
    known = ("auto",) * auto + tuple(DATASET_SHAPES)
    if not isinstance(name, str):
        raise ParameterTypeError(f"{what} must be one of {known}, got {type(name).__name__} {name!r}")
    if name not in DATASET_SHAPES:
        raise ValueError(f"{what} must be one of {known}, got {name!r}")
    return name
