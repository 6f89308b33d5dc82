"""Models used by the papers.

- :class:`MLP`: HIST's two-layer fully connected network, 784-300-10 with ReLU (HIST Sec. V).
"""
from __future__ import annotations

import math

import torch
from torch import nn


class MLP(nn.Module):
    """Two-layer perceptron ``in_features -> hidden -> num_classes`` with ReLU (HIST Sec. V: 784-300-10).

    Input ``[B, ...]`` is flattened to ``[B, in_features]``; output logits ``[B, num_classes]``.
    """

    def __init__(self, in_features: int = 784, hidden: int = 300, num_classes: int = 10):
        super().__init__()
        for name, value in (("in_features", in_features), ("hidden", hidden), ("num_classes", num_classes)):
            if value < 1:
                raise ValueError(f"{name} must be >= 1, got {value}")
        self.fc1 = nn.Linear(in_features, hidden)
        self.fc2 = nn.Linear(hidden, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x.flatten(1))))


def init_linear_(layer: nn.Linear, generator: torch.Generator) -> None:
    """PyTorch's default ``nn.Linear`` initialisation, drawn from ``generator`` (reproducible).

    weight ~ kaiming_uniform(a=sqrt(5)) = U(-1/sqrt(fan_in), 1/sqrt(fan_in)); bias ~ the same range.
    """
    with torch.no_grad():
        nn.init.kaiming_uniform_(layer.weight, a=math.sqrt(5), generator=generator)
        bound = 1.0 / math.sqrt(layer.in_features)
        nn.init.uniform_(layer.bias, -bound, bound, generator=generator)


def make_mlp(in_features: int, hidden: int, num_classes: int, generator: torch.Generator) -> MLP:
    """An :class:`MLP` initialised from ``generator`` (stream ``model``)."""
    model = MLP(in_features, hidden, num_classes)
    for layer in (model.fc1, model.fc2):
        init_linear_(layer, generator)
    return model
