"""A dataset held as tensors (:class:`TensorDataset`), the data folder and the helpers every loader shares (the
folder argument, the normalisation of uint8 images, :class:`DatasetNotFoundError`): the ground under
:mod:`.datasets` (torchvision's datasets) and :mod:`.folders` (image folders), which both import it."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import torch
import torchvision
from torchvision.transforms import v2

from ..core.validate import ParameterTypeError


def data_dir() -> Path:
    """Root under which torchvision datasets live: ``$FEDLIB_DATA_DIR``, else ``data/`` of the checkout holding
    fedlib (created if missing).

    Raises:
        NotADirectoryError: that path is a file."""
    path = Path(os.environ.get("FEDLIB_DATA_DIR") or Path(__file__).resolve().parents[2] / "data")
    if path.exists() and not path.is_dir():
        raise NotADirectoryError(f"{path} is a file; fedlib needs a folder there")
    path.mkdir(parents=True, exist_ok=True)
    return path


class DatasetNotFoundError(FileNotFoundError):
    """A dataset is not on disk and could not be obtained; the message says how to get it."""


def _root(name: str, value) -> Path:
    """A folder argument: ``None`` (the default), a string or a ``Path``."""
    if value is None:
        return data_dir()
    if not isinstance(value, (str, Path)) or (isinstance(value, str) and not value.strip()):
        raise ParameterTypeError(f"{name} must be a folder path (str or pathlib.Path) or None, got {value!r}")
    return Path(value)


@dataclass(frozen=True)
class TensorDataset:
    """A whole dataset held as tensors.

    Attributes:
        name: dataset name, e.g. ``"fashion-mnist"``.
        x_train: ``[n_train, C, H, W]`` float32, normalised.
        y_train: ``[n_train]`` int64 labels in ``[0, num_classes)``.
        x_test: ``[n_test, C, H, W]`` float32, normalised.
        y_test: ``[n_test]`` int64.
        classes: class names, ``len == num_classes``.
        source: where the files were read from (provenance for figures and metrics).

    Raises:
        ValueError / ParameterTypeError: inputs and labels of different lengths, inputs of different per-sample
            shapes, labels that are not 1-D int64 or lie outside ``[0, num_classes)`` (naming the split and the
            labels found), fewer than 2 classes.
    """

    name: str
    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor
    classes: tuple[str, ...]
    source: str

    def __post_init__(self):
        k = len(self.classes)
        if k < 2:
            raise ValueError(f"classes must name at least 2 classes, got {self.classes!r}")
        for split in ("train", "test"):
            x, y = getattr(self, f"x_{split}"), getattr(self, f"y_{split}")
            if not isinstance(x, torch.Tensor) or not isinstance(y, torch.Tensor):
                raise ParameterTypeError(f"x_{split} and y_{split} must be torch tensors, got {type(x).__name__} "
                                         f"and {type(y).__name__}")
            if y.dim() != 1 or y.dtype != torch.int64 or len(x) != len(y):
                raise ValueError(f"y_{split} must be [n] int64 labels of the n = {len(x)} inputs x_{split}, got "
                                 f"{y.dtype} of shape {tuple(y.shape)}")
            if len(y) and (int(y.min()) < 0 or int(y.max()) >= k):
                bad = sorted({int(v) for v in y[(y < 0) | (y >= k)][:100]})[:5]
                raise ValueError(f"y_{split} must hold class labels 0..{k - 1} of the {k} classes, got {bad}")
        if self.x_train.shape[1:] != self.x_test.shape[1:]:
            raise ValueError(f"x_train and x_test must have the same per-sample shape, got "
                             f"{tuple(self.x_train.shape[1:])} and {tuple(self.x_test.shape[1:])}")

    @property
    def num_classes(self) -> int:
        return len(self.classes)


def _normalise(images: torch.Tensor, mean: tuple, std: tuple) -> torch.Tensor:
    """uint8 ``[n, C, H, W]`` -> float32 scaled to [0, 1] and normalised per channel (torchvision v2)."""
    transform = v2.Compose([v2.ToDtype(torch.float32, scale=True), v2.Normalize(mean, std)])
    return transform(torchvision.tv_tensors.Image(images)).as_subclass(torch.Tensor)
