"""``python -m fedlib.lab.data NAME [--download] [--root DIR]``: prepare a dataset ahead of time;
``python -m fedlib.lab.data cifar10 --from-images PATH``: CIFAR-10 from a copy as image files in class folders.
A command, so it lives in the lab and follows its command-line convention (:mod:`fedlib.lab.cli`); the loaders it
calls are :mod:`fedlib.data.datasets`'s.

CIFAR-10 from images (:func:`import_cifar10_images`): ``PATH`` is a folder or a ``.tar.gz`` / ``.tgz`` / ``.tar``
holding ``{train,test}/<class>/<file>.{jpg,jpeg,png}`` (one folder level above ``train`` and ``test`` is allowed),
the layout of the JPEG copy in this project's shared data (``cifar-10-images.tar.gz``) and of the PNG copies in class
folders that Kaggle distributes. The ten classes are CIFAR-10's (airplane ... truck; CIFAR-10's label order is this
alphabetical order); 5,000 training and 1,000 test images per class, each 32 x 32 RGB. The images are written in
torchvision's on-disk layout (``<root>/cifar-10-batches-py``: five training batches of 10,000, ``test_batch``,
``batches.meta``), which ``load_dataset("cifar10")`` reads, and ``PROVENANCE.json`` beside them says what they
are: a copy's pixels are not the original's (a JPEG copy was re-encoded lossily), so every result on it says
"CIFAR-10 (JPEG copy)": :func:`fedlib.data.copy_label` reads the note, and ``load_dataset("cifar10")``'s ``source``
(in every record and metrics file) and the figures' provenance caption lead with it.

**Choice: the order.** A copy in class folders has lost the original order of the samples, and the experiments
take "the first n training samples" (DTFL's ``train_subset``): in class order those would be one class. The samples
are written in a fixed pseudo-random order (numpy's PCG64 seeded with :data:`ORDER_SEED`, over the files sorted by
split, class and name), so that a prefix holds every class in about equal shares, as CIFAR-10's own order does.
"""
import hashlib
import io
import json
import pickle
import sys
import tarfile
from pathlib import Path

import numpy as np

from fedlib.lab.cli import ArgumentParser, writable_dir    # the project's convention: repeated or unknown options named

from fedlib.data.datasets import (CIFAR, DATASETS, DEBIAN_FASHION_MNIST, PROVENANCE, DatasetNotFoundError, copy_label,
                                  load_cifar, load_dataset, prepare_fashion_mnist)
from fedlib.data.tensors import data_dir

#: CIFAR-10's classes in its label order (alphabetical)
CIFAR10_CLASSES = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")
#: images per class in each split
PER_CLASS = {"train": 5000, "test": 1000}
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png")
#: the seed of the order the samples are written in (module docstring, "Choice: the order")
ORDER_SEED = 10


def _members(path: Path):
    """``(split, class, name, read)`` of every image file under ``path`` (a folder or a tar archive), ``read()``
    giving its bytes; files outside ``{train,test}/<class>/`` are skipped."""
    if path.is_dir():
        for f in sorted(path.rglob("*")):
            if f.is_file() and f.suffix.lower() in IMAGE_SUFFIXES:
                parts = f.relative_to(path).parts
                if len(parts) >= 3 and parts[-3] in PER_CLASS:
                    yield parts[-3], parts[-2], parts[-1], f.read_bytes
        return
    with tarfile.open(path) as tar:
        for m in tar:
            parts = Path(m.name).parts
            if m.isfile() and Path(m.name).suffix.lower() in IMAGE_SUFFIXES and len(parts) >= 3 \
                    and parts[-3] in PER_CLASS:
                data = tar.extractfile(m).read()
                yield parts[-3], parts[-2], parts[-1], (lambda d=data: d)


def read_class_folders(path: Path) -> dict:
    """``{"train": (images uint8 [50000, 32, 32, 3], labels int64 [50000], names), "test": (... 10000 ...),
    "format": "jpeg" | "png" | "mixed"}``, in the order of :data:`ORDER_SEED` (module docstring).

    Raises:
        ValueError: the path holds no ``{train,test}/<class>/`` images, a class that is not CIFAR-10's, another
            count per class, or an image that is not 32 x 32 (the message names the file)."""
    from PIL import Image

    found = {s: {} for s in PER_CLASS}
    kinds = set()
    for split, cls, name, read in _members(path):
        if cls not in CIFAR10_CLASSES:
            raise ValueError(f"{path}: class folder {split}/{cls} is not a CIFAR-10 class; classes: "
                             f"{', '.join(CIFAR10_CLASSES)}")
        with Image.open(io.BytesIO(read())) as img:
            kinds.add("jpeg" if img.format == "JPEG" else img.format.lower())
            if img.size != (32, 32):
                raise ValueError(f"{path}: {split}/{cls}/{name} is {img.size[0]} x {img.size[1]}, not 32 x 32")
            found[split][(cls, name)] = np.asarray(img.convert("RGB"), dtype=np.uint8)
    out = {"format": kinds.pop() if len(kinds) == 1 else "mixed"}
    for split, per in PER_CLASS.items():
        counts = {c: sum(1 for k in found[split] if k[0] == c) for c in CIFAR10_CLASSES}
        if any(n != per for n in counts.values()):
            raise ValueError(f"{path}: {split} must hold {per} images of each CIFAR-10 class (folders "
                             f"{split}/<class>/ with .jpg, .jpeg or .png files), found {counts}")
        keys = sorted(found[split])
        order = np.random.Generator(np.random.PCG64(ORDER_SEED)).permutation(len(keys))
        keys = [keys[i] for i in order]
        out[split] = (np.stack([found[split][k] for k in keys]),
                      np.array([CIFAR10_CLASSES.index(k[0]) for k in keys], dtype=np.int64),
                      [f"{k[0]}/{k[1]}" for k in keys])
    return out


def _sha256(path: Path) -> str | None:
    if not path.is_file():
        return None
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def import_cifar10_images(path: str | Path, root: str | Path | None = None) -> Path:
    """Write the CIFAR-10 copy at ``path`` (module docstring) into ``<root>/cifar-10-batches-py`` (``root``:
    :func:`fedlib.data.data_dir` by default) with its ``PROVENANCE.json``, then load it back with
    :func:`fedlib.data.load_cifar` (shapes and labels checked). Returns the folder.

    Raises:
        ValueError: as :func:`read_class_folders`; ``path`` is neither a folder nor a tar archive; the target
            folder already holds CIFAR-10 files (nothing is overwritten: remove them first)."""
    path = Path(path)
    if not (path.is_dir() or (path.is_file() and tarfile.is_tarfile(path))):
        raise ValueError(f"--from-images: {path} is neither a folder nor a .tar.gz / .tgz / .tar archive")
    reader = CIFAR["cifar10"][0]
    folder = Path(root if root is not None else data_dir()) / reader.base_folder
    present = sorted(f for f, _ in reader.train_list + reader.test_list + [(reader.meta["filename"], None)]
                     if (folder / f).exists())
    if present:
        raise ValueError(f"--from-images: {folder} already holds {', '.join(present)}; nothing is overwritten: "
                         f"remove the folder first")
    data = read_class_folders(path)
    folder.mkdir(parents=True, exist_ok=True)
    batches = [(f, "train", i) for i, (f, _) in enumerate(reader.train_list)] + [(reader.test_list[0][0], "test", 0)]
    for fname, split, i in batches:
        x, y, names = data[split]
        s = slice(10000 * i, 10000 * (i + 1))
        entry = {"batch_label": f"{fname} of the CIFAR-10 copy {path.name}", "labels": y[s].tolist(),
                 "data": np.ascontiguousarray(x[s].transpose(0, 3, 1, 2)).reshape(len(y[s]), 3072),
                 "filenames": names[s]}
        with (folder / fname).open("wb") as fh:
            pickle.dump(entry, fh, protocol=4)
    with (folder / reader.meta["filename"]).open("wb") as fh:
        pickle.dump({"label_names": list(CIFAR10_CLASSES), "num_cases_per_batch": 10000, "num_vis": 3072}, fh,
                    protocol=4)
    what = {"jpeg": "CIFAR-10 (JPEG copy)", "png": "CIFAR-10 (PNG copy)"}.get(data["format"], "CIFAR-10 (copy)")
    (folder / PROVENANCE).write_text(json.dumps({
        "what": what, "from": path.name, "sha256": _sha256(path), "format": data["format"],
        "train": len(data["train"][1]), "test": len(data["test"][1]),
        "order": f"PCG64({ORDER_SEED}) permutation of the files sorted by class and name, per split",
        "note": "not the original pixels: results on it say so", "made_by": "python -m fedlib.lab.data cifar10 "
        "--from-images"}, indent=1) + "\n")
    load_cifar("cifar10", folder.parent)                      # shapes and labels, as every run will read them
    return folder


def main(argv: list[str] | None = None) -> int:
    """``python -m fedlib.lab.data NAME [--download] [--root DIR]``: prepare (Fashion-MNIST) or load and check the files,
    print their source; exit 1 with a hint if missing. CINIC-10 and HAM10000 cannot be downloaded (``--download``
    is refused for them). ``cifar10 --from-images PATH``: :func:`import_cifar10_images`; exit 1 naming the file
    or folder that stands in the way."""
    parser = ArgumentParser(prog="python -m fedlib.lab.data", description="Prepare a dataset for fedlib.")
    parser.add_argument("name", choices=sorted(DATASETS))
    parser.add_argument("--download", action="store_true", help="allow torchvision's download (CIFAR, FMNIST)")
    parser.add_argument("--root", type=writable_dir, default=None,
                        help="data folder, outside the committed folders (default: <repo>/data)")
    parser.add_argument("--debian-dir", default=None, help=f"Debian package folder (default {DEBIAN_FASHION_MNIST})")
    parser.add_argument("--from-images", default=None, metavar="PATH",
                        help="cifar10 only: a folder or .tar.gz of {train,test}/<class>/ image files (JPEG or PNG), "
                             "written in torchvision's layout with a PROVENANCE.json saying what it is")
    args = parser.parse_args(argv)
    if args.debian_dir is not None and args.name != "fashion-mnist":
        parser.error("argument --debian-dir: applies to fashion-mnist only")
    if args.download and args.name != "fashion-mnist" and args.name not in CIFAR:
        parser.error(f"argument --download: applies to fashion-mnist and {', '.join(sorted(CIFAR))} only; "
                     f"{args.name} cannot be downloaded")
    if args.from_images is not None and (args.name != "cifar10" or args.download):
        parser.error("argument --from-images: applies to cifar10 alone, without --download")
    args.debian_dir = args.debian_dir or str(DEBIAN_FASHION_MNIST)
    try:
        if args.from_images is not None:
            folder = import_cifar10_images(args.from_images, args.root)
            print(f"{copy_label('cifar10', folder.parent)}: torchvision files in {folder}")
        elif args.name == "fashion-mnist":
            print(prepare_fashion_mnist(args.root, allow_download=args.download, debian_dir=args.debian_dir))
        elif args.name in CIFAR:
            print(load_cifar(args.name, args.root, allow_download=args.download).source)
        else:
            print(load_dataset(args.name, root=args.root).source)
    except (DatasetNotFoundError, ValueError) as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
