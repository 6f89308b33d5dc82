"""Image-folder datasets as normalised in-memory tensors: CINIC-10 and HAM10000.

Neither can be downloaded by torchvision (and this machine has no internet): put the files under the data
folder (``$FEDLIB_DATA_DIR``, default ``<repo>/data``) in the layouts below; ``python -m fedlib.lab.data cinic10``
/ ``ham10000`` checks them.

- **CINIC-10** (L. N. Darlow, E. J. Crowley, A. Antoniou, A. J. Storkey, *CINIC-10 is not ImageNet or
  CIFAR-10*, arXiv:1810.03505, 2018; https://datashare.ed.ac.uk/handle/10283/3192): the official
  ``CINIC-10.tar.gz`` extracted into ``<data>/cinic-10``, i.e. ``<data>/cinic-10/{train,valid,test}/<class>/*.png``
  (10 classes, 90,000 32x32 PNGs per split). Read with :class:`torchvision.datasets.ImageFolder`.
- **HAM10000** (P. Tschandl, C. Rosendahl, H. Kittler, *The HAM10000 dataset, a large collection of
  multi-source dermatoscopic images of common pigmented skin lesions*, Sci. Data 5, 180161, 2018;
  https://doi.org/10.7910/DVN/DBW86T): ``<data>/ham10000/HAM10000_metadata.csv`` and the images
  ``<image_id>.jpg`` (600x450 RGB JPEGs) in ``<data>/ham10000/HAM10000_images_part_1/`` and/or
  ``HAM10000_images_part_2/`` (the Harvard Dataverse / Kaggle archives unzipped). 10,015 images of 7,470
  lesions, 7 diagnoses.
"""
from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import torch
import torchvision
from PIL import Image
from torchvision.transforms import functional as TF

from .tensors import DatasetNotFoundError, TensorDataset, _normalise, _root
from ..core.validate import check_bool, check_float, check_int

__all__ = ["CINIC10_CLASSES", "CINIC10_MEAN_STD", "HAM10000_CLASSES", "cinic10_available", "load_cinic10",
           "ham10000_available", "load_ham10000", "lesion_split"]

CINIC10_FOLDER = "cinic-10"
#: CINIC-10's classes (CIFAR-10's), in ImageFolder's (alphabetical) label order
CINIC10_CLASSES = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")
#: CINIC-10's published per-channel mean and std of pixels in [0, 1] (Darlow et al. 2018, the dataset's README)
CINIC10_MEAN_STD = ((0.47889522, 0.47227842, 0.43047404), (0.24205776, 0.23828046, 0.25874835))

HAM10000_FOLDER = "ham10000"
HAM10000_METADATA = "HAM10000_metadata.csv"
HAM10000_IMAGE_DIRS = ("HAM10000_images_part_1", "HAM10000_images_part_2")
#: HAM10000's diagnoses (``dx`` column), sorted: label index = position. akiec: actinic keratoses / intraepithelial
#: carcinoma, bcc: basal cell carcinoma, bkl: benign keratosis-like, df: dermatofibroma, mel: melanoma,
#: nv: melanocytic nevi, vasc: vascular lesions.
HAM10000_CLASSES = ("akiec", "bcc", "bkl", "df", "mel", "nv", "vasc")


def _cinic10_hint(folder: Path) -> str:
    return (f"It cannot be downloaded on this machine: get CINIC-10.tar.gz "
            f"(https://datashare.ed.ac.uk/handle/10283/3192) on a machine with internet access and extract it "
            f"into {folder} (`mkdir -p {folder} && tar -xzf CINIC-10.tar.gz -C {folder}`), so that "
            f"{folder}/train/airplane/*.png exists.")


def cinic10_available(root: str | Path | None = None) -> bool:
    """Whether ``<root>/cinic-10/train`` and ``test`` exist, each with the 10 class folders (``root``: default
    :func:`fedlib.data.datasets.data_dir`). Does not open the images; :func:`load_cinic10` checks them."""
    folder = _root("root", root) / CINIC10_FOLDER
    return all((folder / split / c).is_dir() for split in ("train", "test") for c in CINIC10_CLASSES)


def _read_cinic10_split(folder: Path) -> tuple[torch.Tensor, torch.Tensor]:
    """One CINIC-10 split folder -> uint8 ``[n, 3, 32, 32]`` images and int64 ``[n]`` labels (ImageFolder)."""
    if not folder.is_dir():
        raise DatasetNotFoundError(f"CINIC-10 split folder {folder} is missing. {_cinic10_hint(folder.parent)}")
    found = sorted(p.name for p in folder.iterdir() if p.is_dir())
    if tuple(found) != CINIC10_CLASSES:
        raise DatasetNotFoundError(f"CINIC-10 folder {folder} must hold exactly the class folders "
                                   f"{list(CINIC10_CLASSES)}, found {found}. {_cinic10_hint(folder.parent)}")
    try:  # its default loader opens each file with PIL and converts it to RGB (CINIC-10 has some grey images)
        ds = torchvision.datasets.ImageFolder(str(folder), transform=TF.pil_to_tensor)
    except FileNotFoundError as exc:  # a class folder without image files
        raise DatasetNotFoundError(f"CINIC-10 folder {folder}: {exc}. {_cinic10_hint(folder.parent)}") from exc
    images = []
    for i, (path, _) in enumerate(ds.samples):
        image = ds[i][0]
        if tuple(image.shape) != (3, 32, 32):
            raise DatasetNotFoundError(f"CINIC-10 image {path} is {image.shape[2]}x{image.shape[1]}, not 32x32")
        images.append(image)
    return torch.stack(images), torch.tensor(ds.targets, dtype=torch.long)


def load_cinic10(root: str | Path | None = None, use_valid: bool = False) -> TensorDataset:
    """CINIC-10 (Darlow et al. 2018) from ``<root>/cinic-10/{train,valid,test}/<class>/*.png``.

    Args:
        root: data folder (default :func:`fedlib.data.datasets.data_dir`).
        use_valid: train on ``train`` + ``valid`` (180,000 images) instead of ``train`` alone (90,000); the
            dataset's authors suggest both. The test set is always ``test`` (90,000).

    Returns:
        ``x_* [n, 3, 32, 32]`` float32: pixels scaled to [0, 1] and normalised per channel with CINIC-10's
        published mean/std (:data:`CINIC10_MEAN_STD`); ``y_* [n]`` int64 in [0, 10), the class folders in
        alphabetical order (= CIFAR-10's order, :data:`CINIC10_CLASSES`).

    Raises:
        ParameterTypeError: ``root`` not a path, ``use_valid`` not a bool.
        DatasetNotFoundError: a split folder is missing (the message says where the files go; this machine
            cannot download them), the class folders are not exactly the 10 classes, a class folder has no
            images, or an image is not 32x32.
    """
    root = _root("root", root)
    check_bool("use_valid", use_valid)
    folder = root / CINIC10_FOLDER
    if not folder.is_dir():
        raise DatasetNotFoundError(f"CINIC-10 is not in {folder}. {_cinic10_hint(folder)}")
    parts = [_read_cinic10_split(folder / s) for s in (("train", "valid") if use_valid else ("train",))]
    x_train, y_train = torch.cat([p[0] for p in parts]), torch.cat([p[1] for p in parts])
    x_test, y_test = _read_cinic10_split(folder / "test")
    return TensorDataset("cinic10", _normalise(x_train, *CINIC10_MEAN_STD), y_train,
                         _normalise(x_test, *CINIC10_MEAN_STD), y_test, CINIC10_CLASSES,
                         f"image folders in {folder} (train: {'train+valid' if use_valid else 'train'}, test: test)")


def _ham10000_hint(folder: Path) -> str:
    return (f"It cannot be downloaded on this machine: get HAM10000 (https://doi.org/10.7910/DVN/DBW86T or "
            f"Kaggle's 'skin-cancer-mnist-ham10000') on a machine with internet access and put "
            f"{HAM10000_METADATA} in {folder} and the images <image_id>.jpg in {folder}/{HAM10000_IMAGE_DIRS[0]}/ "
            f"and/or {folder}/{HAM10000_IMAGE_DIRS[1]}/.")


def ham10000_available(root: str | Path | None = None) -> bool:
    """Whether ``<root>/ham10000/HAM10000_metadata.csv`` and at least one image folder exist (``root``: default
    :func:`fedlib.data.datasets.data_dir`). Does not open the images; :func:`load_ham10000` checks them."""
    folder = _root("root", root) / HAM10000_FOLDER
    return (folder / HAM10000_METADATA).is_file() and any((folder / d).is_dir() for d in HAM10000_IMAGE_DIRS)


def lesion_split(lesion_ids, test_fraction: float = 0.2, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Deterministic train/test split of images grouped by lesion: every image of a lesion lands on one side.

    The sorted unique lesion ids are permuted by ``numpy.random.default_rng(seed)``; the first
    ``round(test_fraction * n_lesions)`` (at least 1, at most n_lesions - 1) go to the test set. The fraction is
    one of lesions, not of images (HAM10000: 1 to 6 images per lesion).

    Args:
        lesion_ids: one lesion id per image (strings). test_fraction: in (0, 1). seed: >= 0.

    Returns:
        ``(train_idx, test_idx)``: increasing int64 image indices.

    Raises:
        ValueError / ParameterTypeError: ``test_fraction`` not in (0, 1), ``seed`` not a non-negative int, or
        fewer than 2 lesions.
    """
    check_float("test_fraction", test_fraction, 0, 1, low_open=True, high_open=True)
    check_int("seed", seed, 0)
    ids = np.asarray(list(lesion_ids), dtype=str)
    lesions = np.unique(ids)  # sorted
    if len(lesions) < 2:
        raise ValueError(f"lesion_split needs at least 2 lesions, got {len(lesions)}")
    n_test = min(max(int(round(test_fraction * len(lesions))), 1), len(lesions) - 1)
    test_lesions = lesions[np.random.default_rng(seed).permutation(len(lesions))[:n_test]]
    is_test = np.isin(ids, test_lesions)
    return np.flatnonzero(~is_test), np.flatnonzero(is_test)


def _read_ham10000_metadata(folder: Path) -> list[dict]:
    """Rows of ``HAM10000_metadata.csv`` (``csv`` module); checks the columns and the diagnoses."""
    path = folder / HAM10000_METADATA
    if not path.is_file():
        raise DatasetNotFoundError(f"HAM10000 is not in {folder} (no {path}). {_ham10000_hint(folder)}")
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        missing = [c for c in ("lesion_id", "image_id", "dx") if c not in (reader.fieldnames or [])]
        if missing:
            raise DatasetNotFoundError(f"{path} lacks the column(s) {missing}; its header is {reader.fieldnames} "
                                       f"(expected lesion_id,image_id,dx,dx_type,age,sex,localization)")
        rows = list(reader)
    if not rows:
        raise DatasetNotFoundError(f"{path} has no rows. {_ham10000_hint(folder)}")
    for line, row in enumerate(rows, start=2):
        if row["dx"] not in HAM10000_CLASSES:
            raise DatasetNotFoundError(f"{path} line {line}: dx {row['dx']!r} (image {row['image_id']}) is not a "
                                       f"HAM10000 diagnosis; allowed: {list(HAM10000_CLASSES)}")
    return rows


def _read_ham10000_image(folder: Path, image_id: str, size: int) -> torch.Tensor:
    """``<image_id>.jpg`` from either image folder -> uint8 ``[3, size, size]`` (antialiased resize)."""
    for d in HAM10000_IMAGE_DIRS:
        path = folder / d / f"{image_id}.jpg"
        if path.is_file():
            with Image.open(path) as im:
                image = TF.pil_to_tensor(im.convert("RGB"))
            return TF.resize(image, [size, size], antialias=True)
    raise DatasetNotFoundError(f"HAM10000 image {image_id}.jpg is in neither {folder / HAM10000_IMAGE_DIRS[0]} "
                               f"nor {folder / HAM10000_IMAGE_DIRS[1]}. {_ham10000_hint(folder)}")


def load_ham10000(root: str | Path | None = None, image_size: int = 32, test_fraction: float = 0.2,
                  seed: int = 0) -> TensorDataset:
    """HAM10000 (Tschandl et al. 2018) from ``<root>/ham10000`` (metadata CSV + ``HAM10000_images_part_{1,2}``).

    Labels are the ``dx`` column, index = position in the sorted :data:`HAM10000_CLASSES`. The images (600x450)
    are resized to ``image_size`` x ``image_size`` (the whole image, so the 4:3 aspect ratio is squeezed) with
    torchvision's antialiased bilinear resize; the default 32 matches CIFAR-10/CINIC-10, so that the same 32x32
    ResNets (and :data:`fedlib.data.DATASET_SHAPES`) serve every dataset. HAM10000 has no official test set: the
    split is :func:`lesion_split` (by ``lesion_id``, so that no lesion has images on both sides, seeded,
    ``test_fraction`` of the lesions). Normalisation: per-channel mean and std of the *training* images (pixels in
    [0, 1], after resizing), applied to both splits; a channel with zero spread is divided by 1. Images keep the
    CSV's order within each split.

    Returns:
        ``x_* [n, 3, image_size, image_size]`` float32, ``y_* [n]`` int64 in [0, 7).

    Raises:
        ParameterTypeError / ValueError: ``root`` not a path, ``image_size`` not an int >= 1, ``test_fraction``
            not in (0, 1), ``seed`` not an int >= 0.
        DatasetNotFoundError: the metadata file or an image is missing (the message names it and says where the
            files go; this machine cannot download them), a needed column is missing, or a ``dx`` is unknown.
    """
    root = _root("root", root)
    check_int("image_size", image_size, 1)
    check_float("test_fraction", test_fraction, 0, 1, low_open=True, high_open=True)
    check_int("seed", seed, 0)
    folder = root / HAM10000_FOLDER
    rows = _read_ham10000_metadata(folder)
    images = torch.stack([_read_ham10000_image(folder, r["image_id"], image_size) for r in rows])
    labels = torch.tensor([HAM10000_CLASSES.index(r["dx"]) for r in rows], dtype=torch.long)
    train_idx, test_idx = (torch.from_numpy(i) for i in lesion_split([r["lesion_id"] for r in rows],
                                                                      test_fraction, seed))
    train = images[train_idx].to(torch.float64) / 255
    mean = train.mean(dim=(0, 2, 3))
    std = train.std(dim=(0, 2, 3), unbiased=False)
    std = torch.where(std > 0, std, torch.ones_like(std))
    mean_std = (tuple(mean.tolist()), tuple(std.tolist()))
    return TensorDataset("ham10000", _normalise(images[train_idx], *mean_std), labels[train_idx],
                         _normalise(images[test_idx], *mean_std), labels[test_idx], HAM10000_CLASSES,
                         f"{HAM10000_METADATA} and images in {folder} (lesion split: test_fraction={test_fraction}, "
                         f"seed={seed}; {image_size}x{image_size})")
