"""``python -m fedlib.lab.data NAME [--download] [--root DIR]``: prepare a dataset ahead of time. A command, so it
lives in the lab and follows its command-line convention (:mod:`fedlib.lab.cli`); the loaders it calls are
:mod:`fedlib.data.datasets`'s."""
import sys

from fedlib.lab.cli import ArgumentParser, writable_dir    # the project's convention: repeated or unknown options named

from fedlib.data.datasets import (CIFAR, DATASETS, DEBIAN_FASHION_MNIST, DatasetNotFoundError, load_cifar, load_dataset,
                                  prepare_fashion_mnist)


def main(argv: list[str] | None = None) -> int:
    """``python -m fedlib.lab.data NAME [--download] [--root DIR]``: prepare (Fashion-MNIST) or load and check the files,
    print their source; exit 1 with a hint if missing. CINIC-10 and HAM10000 cannot be downloaded (``--download``
    is refused for them)."""
    parser = ArgumentParser(prog="python -m fedlib.lab.data", description="Prepare a dataset for fedlib.")
    parser.add_argument("name", choices=sorted(DATASETS))
    parser.add_argument("--download", action="store_true", help="allow torchvision's download (CIFAR, FMNIST)")
    parser.add_argument("--root", type=writable_dir, default=None,
                        help="data folder, outside the committed folders (default: <repo>/data)")
    parser.add_argument("--debian-dir", default=None, help=f"Debian package folder (default {DEBIAN_FASHION_MNIST})")
    args = parser.parse_args(argv)
    if args.debian_dir is not None and args.name != "fashion-mnist":
        parser.error("argument --debian-dir: applies to fashion-mnist only")
    if args.download and args.name != "fashion-mnist" and args.name not in CIFAR:
        parser.error(f"argument --download: applies to fashion-mnist and {', '.join(sorted(CIFAR))} only; "
                     f"{args.name} cannot be downloaded")
    args.debian_dir = args.debian_dir or str(DEBIAN_FASHION_MNIST)
    try:
        if args.name == "fashion-mnist":
            print(prepare_fashion_mnist(args.root, allow_download=args.download, debian_dir=args.debian_dir))
        elif args.name in CIFAR:
            print(load_cifar(args.name, args.root, allow_download=args.download).source)
        else:
            print(load_dataset(args.name, root=args.root).source)
    except DatasetNotFoundError as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
