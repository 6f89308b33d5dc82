"""Real datasets through torchvision, as normalised in-memory tensors: Fashion-MNIST, CIFAR-10, CIFAR-100 here;
CINIC-10 and HAM10000 (image folders) in :mod:`.folders`, registered in :data:`DATASETS`; the tensors, the data
folder and the loaders' shared helpers in :mod:`.tensors`.

CIFAR-10/100 are read by torchvision's own readers from ``<data_dir>/cifar-10-batches-py`` /
``cifar-100-python`` (the official archives extracted); torchvision downloads them on machines with internet
(``python -m fedlib.lab.data cifar10 --download``). This machine cannot, and the experiments then use Fashion-MNIST.

Fashion-MNIST is found, in this order:

1. ``<data_dir>/FashionMNIST/raw`` already extracted (torchvision's own layout);
2. Debian's ``dataset-fashion-mnist`` package in ``/usr/share/datasets/fashion-mnist``: its ``.gz`` files are
   decompressed into torchvision's raw folder with torchvision's extractor (no network access); Debian
   re-gzipped them, so their ``.gz`` MD5 sums differ from torchvision's and the content is checked instead
   (shapes and 6,000 / 1,000 images per class);
3. torchvision's download (machines with internet), when ``allow_download=True``.

If none works, :class:`DatasetNotFoundError` says how to get the data. Run ``python -m fedlib.lab.data
fashion-mnist`` to prepare it ahead of time (``run_all.sh`` does).
"""
from __future__ import annotations

from pathlib import Path

import json

import torch
import torchvision
from torchvision.datasets.utils import extract_archive

from ..core.validate import ParameterTypeError, check_bool, check_choice
from .folders import load_cinic10, load_ham10000
from .tensors import DatasetNotFoundError, TensorDataset, _normalise, _root

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
    "`python -m fedlib.lab.data fashion-mnist --download` on a machine with internet access."
)


def prepare_fashion_mnist(root: str | Path | None = None, allow_download: bool = False,
                          debian_dir: str | Path = DEBIAN_FASHION_MNIST) -> str:
    """Make torchvision's Fashion-MNIST files available under ``root`` and say where they came from.

    Args:
        root: torchvision root (default :func:`data_dir`).
        allow_download: fall back to torchvision's download when the files are nowhere on disk.
        debian_dir: folder of Debian's ``dataset-fashion-mnist`` package.

    Returns:
        A provenance string: ``"torchvision files in <root>"``, ``"debian package <dir>"`` or
        ``"torchvision download"``.

    Raises:
        DatasetNotFoundError: no files on disk and downloading is disabled or failed; the message gives the
        install command.
    """
    root = _root("root", root)
    check_bool("allow_download", allow_download)
    if not isinstance(debian_dir, (str, Path)):
        raise ParameterTypeError(f"debian_dir must be a folder path (str or pathlib.Path), got {debian_dir!r}")
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
    root = _root("root", root)
    source = prepare_fashion_mnist(root, allow_download, debian_dir)
    splits = {}
    for train in (True, False):
        ds = torchvision.datasets.FashionMNIST(str(root), train=train, download=False)
        splits[train] = (_normalise(ds.data.unsqueeze(1), *FASHION_MNIST_MEAN_STD), ds.targets.long())
        classes = tuple(ds.classes)
    return TensorDataset("fashion-mnist", splits[True][0], splits[True][1], splits[False][0],
                         splits[False][1], classes, source)


class _FilesPresent:
    """Mixin for torchvision's CIFAR readers: accept the files when present, without the official archive's MD5
    sums (a re-packed copy in the real on-disk format loads too); :func:`load_cifar` checks shapes and labels."""

    def _check_integrity(self) -> bool:
        return all((Path(self.root) / self.base_folder / f).is_file() for f, _ in self.train_list + self.test_list)


class _CIFAR10Files(_FilesPresent, torchvision.datasets.CIFAR10):
    meta = {**torchvision.datasets.CIFAR10.meta, "md5": None}


class _CIFAR100Files(_FilesPresent, torchvision.datasets.CIFAR100):
    meta = {**torchvision.datasets.CIFAR100.meta, "md5": None}


#: name -> (reader, downloader, per-channel mean, std) — the usual CIFAR normalisation statistics
CIFAR = {"cifar10": (_CIFAR10Files, torchvision.datasets.CIFAR10,
                     (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)),
         "cifar100": (_CIFAR100Files, torchvision.datasets.CIFAR100,
                      (0.5071, 0.4865, 0.4409), (0.2673, 0.2564, 0.2762))}


#: the note an imported copy writes beside its files (``python -m fedlib.lab.data cifar10 --from-images``): what they
#: are, so that every result on them says so (:func:`copy_label`)
PROVENANCE = "PROVENANCE.json"


def copy_label(name: str, root: str | Path | None = None) -> str | None:
    """What the CIFAR ``name`` files under ``root`` (default :func:`fedlib.data.data_dir`) are when they are a copy
    of the dataset, not its original archive: the ``"what"`` of the :data:`PROVENANCE` note the import wrote beside
    them (e.g. ``"CIFAR-10 (JPEG copy)"``: the pixels were re-encoded lossily); ``None`` for the original files, for
    none on disk and for an unreadable note.

    Raises:
        ValueError: ``name`` is not a CIFAR dataset. ParameterTypeError: ``root`` is not a path."""
    reader = CIFAR[check_choice("name", name, sorted(CIFAR))][0]
    note = _root("root", root) / reader.base_folder / PROVENANCE
    try:
        what = json.loads(note.read_text())["what"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return what if isinstance(what, str) and what else None


def cifar_available(name: str, root: str | Path | None = None) -> bool:
    """Whether CIFAR ``name`` (``"cifar10"``/``"cifar100"``) is on disk in torchvision's layout under ``root``."""
    reader = CIFAR[check_choice("name", name, sorted(CIFAR))][0]
    folder = _root("root", root) / reader.base_folder
    return all((folder / f).is_file() for f, _ in reader.train_list + reader.test_list)


def load_cifar(name: str, root: str | Path | None = None, allow_download: bool = False) -> TensorDataset:
    """CIFAR-10 or CIFAR-100 through torchvision (its ``cifar-10-batches-py`` / ``cifar-100-python`` folders).

    Shapes: ``x_* [n, 3, 32, 32]`` float32 normalised per channel, ``y_* [n]`` int64 (CIFAR-100: fine labels).
    ``source`` says where the files are, led by what they are when they are a copy (:func:`copy_label`:
    ``"CIFAR-10 (JPEG copy): torchvision files in ..."``), so every record and metrics file computed on a copy
    names it.

    Raises:
        ValueError: unknown name. ParameterTypeError: ``root`` not a path, ``allow_download`` not a bool.
        DatasetNotFoundError: the files are missing (this machine cannot download them; the message says where
            to put them) or malformed.
    """
    check_choice("name", name, sorted(CIFAR))
    check_bool("allow_download", allow_download)
    reader, downloader, mean, std = CIFAR[name]
    root = _root("root", root)
    if not cifar_available(name, root):
        if not allow_download:
            raise DatasetNotFoundError(
                f"{name} is not in {root / reader.base_folder}. It cannot be downloaded on this machine: extract "
                f"the official {reader.filename} into {root}, or run `python -m fedlib.lab.data {name} --download` on "
                f"a machine with internet access.")
        downloader(str(root), train=True, download=True)
    splits = {}
    for train in (True, False):
        ds = reader(str(root), train=train, download=False)
        images = torch.from_numpy(ds.data).permute(0, 3, 1, 2).contiguous()  # [n, 3, 32, 32] uint8
        labels = torch.tensor(ds.targets, dtype=torch.long)
        k = len(ds.classes)
        if images.shape[1:] != (3, 32, 32) or len(labels) != len(images) or int(labels.max()) >= k:
            raise DatasetNotFoundError(f"{name} files in {root / reader.base_folder} are malformed "
                                       f"(images {tuple(images.shape)}, {len(labels)} labels, {k} classes)")
        splits[train] = (_normalise(images, mean, std), labels)
        classes = tuple(ds.classes)
    label = copy_label(name, root)                   # a copy (e.g. the JPEG one) says so in every record
    source = f"torchvision files in {root / reader.base_folder}"
    return TensorDataset(name, splits[True][0], splits[True][1], splits[False][0], splits[False][1], classes,
                         source if label is None else f"{label}: {source}")


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


DATASETS = {"fashion-mnist": load_fashion_mnist,
            "cifar10": lambda **kw: load_cifar("cifar10", **kw),
            "cifar100": lambda **kw: load_cifar("cifar100", **kw),
            "cinic10": load_cinic10,
            "ham10000": load_ham10000}
#: keywords :func:`load_dataset` passes on, per dataset
DATASET_KEYWORDS = {"fashion-mnist": ("root", "allow_download", "debian_dir"), "cifar10": ("root", "allow_download"),
                    "cifar100": ("root", "allow_download"), "cinic10": ("root", "use_valid"),
                    "ham10000": ("root", "image_size", "test_fraction", "seed")}


def load_dataset(name: str, **kwargs) -> TensorDataset:
    """Load a dataset by name (one of :data:`DATASETS`).

    Args:
        name: one of :data:`DATASETS`. kwargs: passed to the loader, those of :data:`DATASET_KEYWORDS`:
            ``root``; ``allow_download`` (Fashion-MNIST, CIFAR; plus ``debian_dir`` for Fashion-MNIST);
            ``use_valid`` (CINIC-10, :func:`.folders.load_cinic10`); ``image_size``, ``test_fraction``, ``seed``
            (HAM10000, :func:`.folders.load_ham10000`).

    Raises:
        ValueError: unknown ``name``. ParameterTypeError: ``name`` not a string, an unknown keyword, a bad
            keyword's type.
        DatasetNotFoundError: the files are missing (message says how to install them).
    """
    check_choice("dataset", name, sorted(DATASETS))
    allowed = set(DATASET_KEYWORDS[name])
    unknown = sorted(set(kwargs) - allowed)
    if unknown:
        raise ParameterTypeError(f"load_dataset({name!r}) got unknown keyword(s) {unknown}; allowed: {sorted(allowed)}")
    return DATASETS[name](**kwargs)

