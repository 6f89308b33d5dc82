"""Real datasets through torchvision, as normalised in-memory tensors.

Fashion-MNIST is found, in this order:

1. ``<data_dir>/FashionMNIST/raw`` already extracted (torchvision's own layout);
2. Debian's ``dataset-fashion-mnist`` package in ``/usr/share/datasets/fashion-mnist``: its ``.gz`` files are
   decompressed into torchvision's raw folder with torchvision's extractor (no network access); Debian
   re-gzipped them, so their ``.gz`` MD5 sums differ from torchvision's and the content is checked instead
   (shapes and 6,000 / 1,000 images per class);
3. torchvision's download (machines with internet), when ``allow_download=True``.

If none works, :class:`DatasetNotFoundError` says how to get the data. Run ``python -m fedlib.data
fashion-mnist`` to prepare it ahead of time (``run_all.sh`` does).
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import torch
import torchvision
from torchvision.datasets.utils import extract_archive
from torchvision.transforms import v2

from . import paths

DEBIAN_FASHION_MNIST = Path("/usr/share/datasets/fashion-mnist")
FASHION_MNIST_FILES = (
    "train-images-idx3-ubyte.gz",
    "train-labels-idx1-ubyte.gz",
    "t10k-images-idx3-ubyte.gz",
    "t10k-labels-idx1-ubyte.gz",
)
#: Normalisation of the HIST authors' code: ``(x - 0.5) / 0.5`` on pixels scaled to [0, 1].
FASHION_MNIST_MEAN_STD = ((0.5,), (0.5,))
INSTALL_HINT = (
    "Fashion-MNIST is missing. Install it with `apt-get install -y dataset-fashion-mnist` "
    "(Debian/Ubuntu; files land in /usr/share/datasets/fashion-mnist), or run "
    "`python -m fedlib.data fashion-mnist --download` on a machine with internet access."
)


class DatasetNotFoundError(FileNotFoundError):
    """A dataset is not on disk and could not be obtained; the message says how to get it."""


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
    """

    name: str
    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor
    classes: tuple[str, ...]
    source: str

    @property
    def num_classes(self) -> int:
        return len(self.classes)

    def to(self, device: torch.device | str) -> "TensorDataset":
        """A copy with all tensors on ``device``."""
        return TensorDataset(self.name, self.x_train.to(device), self.y_train.to(device),
                             self.x_test.to(device), self.y_test.to(device), self.classes, self.source)


def prepare_fashion_mnist(root: str | Path | None = None, allow_download: bool = False,
                          debian_dir: str | Path = DEBIAN_FASHION_MNIST) -> str:
    """Make torchvision's Fashion-MNIST files available under ``root`` and say where they came from.

    Args:
        root: torchvision root (default :func:`fedlib.paths.data_dir`).
        allow_download: fall back to torchvision's download when the files are nowhere on disk.
        debian_dir: folder of Debian's ``dataset-fashion-mnist`` package.

    Returns:
        A provenance string: ``"torchvision files in <root>"``, ``"debian package <dir>"`` or
        ``"torchvision download"``.

    Raises:
        DatasetNotFoundError: no files on disk and downloading is disabled or failed; the message gives the
        install command.
    """
    root = Path(root) if root is not None else paths.data_dir()
    raw = root / "FashionMNIST" / "raw"
    extracted = [raw / f[:-3] for f in FASHION_MNIST_FILES]
    if all(p.is_file() for p in extracted):
        return f"torchvision files in {raw}"
    debian_dir = Path(debian_dir)
    if all((debian_dir / f).is_file() for f in FASHION_MNIST_FILES):
        # Debian re-compressed the files (their .gz MD5 sums differ from torchvision's), so torchvision's
        # download check cannot vouch for them: decompress them with torchvision's extractor (the .gz
        # files themselves are read in place, not copied) and check the contents instead.
        staging = raw / ".partial"  # extracted here first, then renamed: an interrupted run leaves no torso
        staging.mkdir(parents=True, exist_ok=True)
        for f, out in zip(FASHION_MNIST_FILES, extracted):
            if not out.is_file():
                Path(extract_archive(str(debian_dir / f), str(staging))).replace(out)
        _check_fashion_mnist(root)
        return f"debian package {debian_dir}"
    if allow_download:
        try:
            torchvision.datasets.FashionMNIST(str(root), train=True, download=True)
        except Exception as exc:  # network errors come in many types
            raise DatasetNotFoundError(f"torchvision could not download Fashion-MNIST ({exc}). "
                                       f"{INSTALL_HINT}") from exc
        return "torchvision download"
    raise DatasetNotFoundError(f"{INSTALL_HINT} (looked in {raw} and {debian_dir})")


def load_fashion_mnist(root: str | Path | None = None, allow_download: bool = False,
                       debian_dir: str | Path = DEBIAN_FASHION_MNIST) -> TensorDataset:
    """Fashion-MNIST (60,000 train / 10,000 test, 28x28 grey, 10 classes) as normalised tensors.

    Pixels are scaled to [0, 1] and normalised with mean 0.5, std 0.5 (the HIST authors' code), with
    torchvision's ``transforms.v2``. Shapes: ``x_* [n, 1, 28, 28]`` float32, ``y_* [n]`` int64.

    Raises:
        DatasetNotFoundError: see :func:`prepare_fashion_mnist`.
    """
    root = Path(root) if root is not None else paths.data_dir()
    source = prepare_fashion_mnist(root, allow_download, debian_dir)
    mean, std = FASHION_MNIST_MEAN_STD
    transform = v2.Compose([v2.ToDtype(torch.float32, scale=True), v2.Normalize(mean, std)])
    splits = {}
    for train in (True, False):
        ds = torchvision.datasets.FashionMNIST(str(root), train=train, download=False)
        images = ds.data.unsqueeze(1)  # [n, 1, 28, 28] uint8
        splits[train] = (transform(torchvision.tv_tensors.Image(images)).as_subclass(torch.Tensor),
                         ds.targets.long())
        classes = tuple(ds.classes)
    return TensorDataset("fashion-mnist", splits[True][0], splits[True][1], splits[False][0],
                         splits[False][1], classes, source)


def _check_fashion_mnist(root: Path) -> None:
    """Check extracted Fashion-MNIST files: 60,000/10,000 images of 28x28, 6,000/1,000 per class.

    Raises:
        DatasetNotFoundError: the files are truncated or not Fashion-MNIST (they are removed).
    """
    for train, n in ((True, 60000), (False, 10000)):
        ds = torchvision.datasets.FashionMNIST(str(root), train=train, download=False)
        counts = torch.bincount(ds.targets, minlength=10)
        if tuple(ds.data.shape) != (n, 28, 28) or not bool((counts == n // 10).all()):
            for f in FASHION_MNIST_FILES:
                (Path(ds.raw_folder) / f[:-3]).unlink(missing_ok=True)
            raise DatasetNotFoundError(f"extracted Fashion-MNIST files look wrong (shape {tuple(ds.data.shape)}, "
                                       f"class counts {counts.tolist()}). {INSTALL_HINT}")


DATASETS = {"fashion-mnist": load_fashion_mnist}


def load_dataset(name: str, **kwargs) -> TensorDataset:
    """Load a dataset by name (one of :data:`DATASETS`).

    Raises:
        ValueError: unknown ``name``.
        DatasetNotFoundError: the files are missing (message says how to install them).
    """
    if name not in DATASETS:
        raise ValueError(f"dataset must be one of {sorted(DATASETS)}, got {name!r}")
    return DATASETS[name](**kwargs)


def main(argv: list[str] | None = None) -> int:
    """``python -m fedlib.data fashion-mnist [--download]``: prepare the files; exit 1 with a hint if missing."""
    parser = argparse.ArgumentParser(description="Prepare a dataset for fedlib.")
    parser.add_argument("name", choices=sorted(DATASETS))
    parser.add_argument("--download", action="store_true", help="allow torchvision's download")
    parser.add_argument("--root", default=None, help="torchvision root (default: <repo>/data)")
    parser.add_argument("--debian-dir", default=str(DEBIAN_FASHION_MNIST), help="Debian package folder")
    args = parser.parse_args(argv)
    try:
        print(prepare_fashion_mnist(args.root, allow_download=args.download, debian_dir=args.debian_dir))
    except DatasetNotFoundError as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
