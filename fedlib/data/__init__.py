"""Real datasets (:mod:`.datasets`: Fashion-MNIST, CIFAR-10/100 through torchvision; :mod:`.folders`: CINIC-10 and
HAM10000 from image folders) and seeded partitioners of a label array into per-client index sets
(:mod:`.partition`); the input shape of each dataset and the notebooks' ``"auto"`` choice (:mod:`.shapes`).
``python -m fedlib.lab.data fashion-mnist`` prepares Fashion-MNIST ahead of time."""
from .datasets import (DATASETS, DatasetNotFoundError, TensorDataset, cifar_available, copy_label, load_cifar,
                       load_dataset, load_fashion_mnist, prepare_fashion_mnist)
from .folders import cinic10_available, ham10000_available, load_cinic10, load_ham10000
from .partition import cell_iid_client_shards, dirichlet, iid, label_counts, shards
from .shapes import DATASET_SHAPES, dataset_available, resolve_dataset

__all__ = ["DATASETS", "DatasetNotFoundError", "TensorDataset", "cifar_available", "copy_label", "load_cifar",
           "load_dataset", "load_fashion_mnist", "prepare_fashion_mnist", "cinic10_available", "load_cinic10", "ham10000_available",
           "load_ham10000", "iid", "shards", "cell_iid_client_shards", "dirichlet", "label_counts", "DATASET_SHAPES",
           "dataset_available", "resolve_dataset"]
