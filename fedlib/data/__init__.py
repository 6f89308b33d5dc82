"""Real datasets (:mod:`.datasets`: Fashion-MNIST, CIFAR-10/100 through torchvision) and seeded partitioners of a
label array into per-client index sets (:mod:`.partition`). ``python -m fedlib.data fashion-mnist`` prepares
Fashion-MNIST ahead of time."""
from .datasets import (DATASETS, DatasetNotFoundError, TensorDataset, cifar_available, load_cifar, load_dataset,
                       load_fashion_mnist, prepare_fashion_mnist)
from .partition import cell_iid_client_shards, dirichlet, iid, label_counts, shards

__all__ = ["DATASETS", "DatasetNotFoundError", "TensorDataset", "cifar_available", "load_cifar", "load_dataset",
           "load_fashion_mnist", "prepare_fashion_mnist", "iid", "shards", "cell_iid_client_shards", "dirichlet",
           "label_counts"]
