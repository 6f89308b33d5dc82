"""FedGKT (He et al. 2020, "Group Knowledge Transfer"), DTFL's fourth baseline (Sec. 4.1: "the same setting as
He et al."), with DTFL's data, partition, client optimiser (Adam, state kept across rounds) and local epoch.

- Client model (:func:`gkt_client_model`, ResNet-8-like as in the spec): stem (= the global model's md1), two
  bottleneck blocks of stage 1 (planes 16·w, outputs 64·w channels), classifier (pool, flatten, fc). Every
  client keeps its own client model and Adam state; client models are never aggregated (FedGKT has no FedAvg).
- Server model (:func:`gkt_server_model`): **choice** the global model minus its stem, i.e. md2..md8 with md2's
  first block taking the 64·w-channel client features (``Bottleneck(64w, 16w)``, no downsample since
  64w = 16w·4). He et al. put a ResNet-55/109 on ResNet-8 features; this keeps the server model of the same
  family and size as the model the other methods train.
- Round: each participating client trains one local epoch on CE + α·KD (teacher: the server's logits of those
  samples) (CE only until it has received server logits), then extracts (eval mode, no grad) features and
  logits of all its samples and sends them with the labels; the server trains ``server_epochs`` epochs over the
  participants' data, client after client, on CE + α·KD (teacher: the clients' logits), then computes (eval
  mode) its logits on each participant's features and returns them (the clients' teachers for the next round).
  KD is He et al.'s ``KL_Loss`` (:func:`kd_loss`, T = 3, α = 1).
- Evaluation (**choice**): FedGKT has no global model; we report the mean accuracy of the composite models
  server(client_k[:2](x)) of the clients that took part in the evaluated round (all clients at round 0), each
  composite scored on its own round-robin slice of the test samples (:func:`evaluate_composites`: the cost of one
  evaluation, not K). DTFL's authors evaluate one client's composite model.
- Randomness: all clients start from one client model, and the server model is drawn after it, under the
  ``model`` stream; every shuffle (clients' local epochs, each server epoch) draws a permutation for every
  client from the ``data`` stream (participants or not, so the streams stay aligned).
"""
from __future__ import annotations

import copy
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torchvision.models.resnet import Bottleneck, conv1x1

from ..core.seeding import resolve_device, torch_generator
from ..core.validate import (ParameterTypeError, check_bool, check_callable, check_choice, check_float, check_instance,
                             check_int)
from ..data import TensorDataset
from ..split import evaluate
from ..split.blocks import _check_shape, _scale, resnet_init
from ..split.resnet_cifar import resnet_cifar
from .training import MODELS, DtflConfig, check_participants, client_data, subset

#: FedGKT's server epochs per round (He et al. run several; one keeps its server work equal to the others')
GKT_SERVER_EPOCHS = 1

#: blocks per stage of the global models
BLOCKS = {"resnet20": 2, "resnet38": 4, "resnet56": 6, "resnet110": 12}
_CHUNK = 500    # samples per forward when extracting features / teacher logits (bounds peak memory)


def _width(width) -> float:
    return check_float("width", width, 0, low_open=True)


def gkt_client_model(in_channels: int, image_size: int, num_classes: int, width: float = 1.0) -> nn.Sequential:
    """FedGKT's client model (module docstring): ``nn.Sequential`` of 3 units [stem, two stage-1 bottleneck
    blocks, classifier]; features = ``net[:2](x)`` (``[B, 64·w, H, W]``), logits = ``net(x)``. torchvision's
    ResNet initialisation (:func:`fedlib.split.blocks.resnet_init`).

    Raises:
        ValueError / ParameterTypeError: a shape below its minimum (naming it), width not finite > 0.
    """
    _check_shape(in_channels, image_size, num_classes)
    p = _scale(16, _width(width))
    out = p * Bottleneck.expansion
    stem = nn.Sequential(nn.Conv2d(in_channels, p, 3, 1, 1, bias=False), nn.BatchNorm2d(p), nn.ReLU(inplace=True))
    blocks = nn.Sequential(Bottleneck(p, p, 1, nn.Sequential(conv1x1(p, out), nn.BatchNorm2d(out))),
                           Bottleneck(out, p))
    head = nn.Sequential(nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(), nn.Linear(out, num_classes))
    return resnet_init(nn.Sequential(stem, blocks, head))


def gkt_server_model(model: str, num_classes: int, width: float = 1.0) -> nn.Sequential:
    """FedGKT's server model: the global ``model``'s md2..md8 with md2's first block replaced by
    ``Bottleneck(64·w, 16·w)`` without downsample (takes the client features; module docstring). Input
    ``[B, 64·w, H, W]``, output ``[B, num_classes]``.

    Raises:
        ValueError / ParameterTypeError: unknown model, num_classes < 2, width not finite > 0 (naming them).
    """
    check_choice("model", model, MODELS)
    check_int("num_classes", num_classes, 2)
    p = _scale(16, _width(width))
    units = list(resnet_cifar(BLOCKS[model], 1, 32, num_classes, width))[1:]
    units[0][0] = resnet_init(nn.Sequential(Bottleneck(p * Bottleneck.expansion, p)))[0]
    return nn.Sequential(*units)


def gkt_models(cfg: DtflConfig, in_channels: int, image_size: int, num_classes: int) -> tuple:
    """The initial (client model, server model) of a run: drawn under the ``model`` stream of ``cfg.seed``,
    client first (every client starts from a copy of it)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(torch_generator(cfg.seed, "model").initial_seed())
        client = gkt_client_model(in_channels, image_size, num_classes, cfg.width)
        return client, gkt_server_model(cfg.model, num_classes, cfg.width)


def kd_loss(student_logits: torch.Tensor, teacher_logits: torch.Tensor, temperature: float = 3.0) -> torch.Tensor:
    """He et al.'s ``KL_Loss``: T²·KL(softmax(teacher/T) ‖ softmax(student/T)), summed over the classes and
    averaged over the batch (the T² factor keeps the gradient scale of the soft targets independent of T). No
    gradient flows into the teacher.

    Raises:
        ValueError / ParameterTypeError: logits not two equal-shaped ``[B, K]`` tensors, temperature not
            finite > 0 (naming them).
    """
    t = check_float("temperature", temperature, 0, low_open=True)
    for name, v in (("student_logits", student_logits), ("teacher_logits", teacher_logits)):
        if not isinstance(v, torch.Tensor) or v.dim() != 2:
            raise ValueError(f"{name} must be a [batch, classes] tensor, got "
                             f"{tuple(v.shape) if isinstance(v, torch.Tensor) else type(v).__name__}")
    if student_logits.shape != teacher_logits.shape:
        raise ValueError(f"student_logits and teacher_logits must have one shape, got "
                         f"{tuple(student_logits.shape)} and {tuple(teacher_logits.shape)}")
    log_s = F.log_softmax(student_logits / t, dim=1)
    log_t = F.log_softmax(teacher_logits.detach() / t, dim=1)
    return t * t * F.kl_div(log_s, log_t, reduction="batchmean", log_target=True)


def _step(net, opt, x, y, teacher, temperature, alpha):
    out = net(x)
    ce = F.cross_entropy(out, y)
    loss = ce if teacher is None or alpha == 0 else ce + alpha * kd_loss(out, teacher, temperature)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return ce.detach()


@torch.no_grad()
def _forward(net, x):
    net.eval()
    return torch.cat([net(x[s:s + _CHUNK]) for s in range(0, len(x), _CHUNK)]) if len(x) else None


def evaluate_composites(clients: list, server: nn.Module, x: torch.Tensor, y: torch.Tensor) -> tuple[float, float]:
    """Test accuracy and mean cross-entropy of the composite models server(client_k[:2](x)) of ``clients``, each on
    its own round-robin slice of the test samples (sample j goes to client j mod n): an estimate of the
    clients' mean composite accuracy at the cost of one composite over ``x`` (evaluating every composite on all
    of ``x`` costs n times as much: 100 clients, 100x). Returns ``(accuracy, loss)`` over all of ``x``."""
    n = len(clients)
    correct = total = 0.0
    for j, c in enumerate(clients):
        idx = torch.arange(j, len(y), n, device=y.device)
        if len(idx):
            a, t = evaluate(nn.Sequential(*c[:2], *server), x[idx], y[idx])
            correct, total = correct + a * len(idx), total + t * len(idx)
    return correct / len(y), total / len(y)


def run_fedgkt(cfg: DtflConfig, data: TensorDataset, rounds: int, participants=None, device: str = "cpu",
               temperature: float = 3.0, kd_alpha: float = 1.0, server_epochs: int = 1, progress=None,
               keep_models: bool = False) -> dict:
    """Train ``rounds`` rounds of FedGKT (module docstring) and evaluate the composite models.

    Args:
        cfg: the run (model = the server's family, width, data, clients, batch, Adam lr / eps, partition, seed;
            ``channels_last`` applies to the models). data: the dataset (``cfg.train_subset`` / ``test_subset``
            applied here). rounds: R >= 1. participants: ``[R, K]`` bools (None = all clients every round); the
            others neither train nor send. device: torch device (``auto``: CUDA when present). temperature: KD
            temperature T (> 0). kd_alpha: α >= 0, weight of the KD term on both sides. server_epochs: server
            epochs per round (>= 1). progress: optional ``progress(round, record)``. keep_models: also return
            the final ``"client_models"`` (list of K) and ``"server_model"`` (``nn.Module``: not JSON).

    Returns:
        As :func:`fedlib.dtfl.run_dtfl`: ``{"config", "device", "samples_per_client", "round", "test_acc",
        "test_loss", "train_loss", "elapsed_s"}`` (one entry per evaluation: round 0, every ``eval_every``
        rounds and the last; ``train_loss`` = the server's mean CE over the round's samples, None at round 0)
        plus ``"method": "fedgkt"`` and ``"gkt"`` (temperature, kd_alpha, server_epochs).

    Raises:
        ValueError / ParameterTypeError: rounds < 1, bad participants, temperature not finite > 0, kd_alpha not
            finite >= 0, server_epochs < 1 (naming them).
    """
    if not isinstance(cfg, DtflConfig):
        raise ParameterTypeError(f"cfg must be a DtflConfig, got {type(cfg).__name__}")
    rounds = check_int("rounds", rounds, 1)
    part = check_participants(participants, rounds, cfg.num_clients)
    temperature = check_float("temperature", temperature, 0, low_open=True)
    alpha = check_float("kd_alpha", kd_alpha, 0)
    server_epochs = check_int("server_epochs", server_epochs, 1)
    check_instance("data", data, TensorDataset, "a fedlib.data.TensorDataset")
    if data.name != cfg.dataset:    # the record's config names the data it was trained on
        raise ValueError(f"data is {data.name!r}, but the config says dataset={cfg.dataset!r}")
    check_callable("progress", progress)
    check_bool("keep_models", keep_models)
    t0 = time.perf_counter()
    dev = resolve_device(device)
    ds = subset(data, cfg.train_subset, cfg.test_subset)
    parts = client_data(cfg, ds.y_train.numpy())
    sizes = [len(p) for p in parts]
    k, b = cfg.num_clients, cfg.batch_size
    xs = [ds.x_train[torch.from_numpy(np.asarray(p, dtype=np.int64))].to(dev) for p in parts]
    ys = [ds.y_train[torch.from_numpy(np.asarray(p, dtype=np.int64))].to(dev) for p in parts]
    x_test, y_test = ds.x_test.to(dev), ds.y_test.to(dev)
    fmt = torch.channels_last if cfg.channels_last else torch.contiguous_format
    client0, server = gkt_models(cfg, ds.x_train.shape[1], ds.x_train.shape[2], ds.num_classes)
    clients = [copy.deepcopy(client0).to(dev, memory_format=fmt) for _ in range(k)]
    server = server.to(dev, memory_format=fmt)
    opts = [torch.optim.Adam(c.parameters(), lr=cfg.lr, eps=cfg.eps) for c in clients]
    opt_s = torch.optim.Adam(server.parameters(), lr=cfg.lr, eps=cfg.eps)
    teacher = [None] * k                                   # server logits per client, in partition order
    gen = torch_generator(cfg.seed, "data")
    rec = {"config": cfg.to_dict(), "method": "fedgkt", "device": str(dev), "samples_per_client": sizes,
           "gkt": {"temperature": temperature, "kd_alpha": alpha, "server_epochs": server_epochs},
           "round": [], "test_acc": [], "test_loss": [], "train_loss": [], "elapsed_s": []}
    loss = None

    def record(r, evaluated):
        acc, tl = evaluate_composites([clients[i] for i in evaluated], server, x_test, y_test)
        for key, v in (("round", r), ("test_acc", acc), ("test_loss", tl), ("train_loss", loss),
                       ("elapsed_s", time.perf_counter() - t0)):
            rec[key].append(v)
        if progress is not None:
            progress(r, rec)

    record(0, list(range(k)))
    for r, here in enumerate(part, start=1):
        active = [i for i in range(k) if here[i] and sizes[i]]
        orders = [torch.randperm(n, generator=gen).to(dev) for n in sizes]     # every client: aligned streams
        feats, logits = {}, {}
        for i in active:                                   # clients: local epoch, then features + logits
            clients[i].train()
            for s in range(0, sizes[i], b):
                idx = orders[i][s:s + b]
                _step(clients[i], opts[i], xs[i][idx], ys[i][idx],
                      None if teacher[i] is None else teacher[i][idx], temperature, alpha)
            feats[i] = _forward(clients[i][:2], xs[i])
            logits[i] = _forward(clients[i][2:], feats[i])
        total, count = torch.zeros((), device=dev), 0
        for _ in range(server_epochs):                     # server: client after client
            orders = [torch.randperm(n, generator=gen).to(dev) for n in sizes]
            server.train()
            for i in active:
                for s in range(0, sizes[i], b):
                    idx = orders[i][s:s + b]
                    ce = _step(server, opt_s, feats[i][idx], ys[i][idx], logits[i][idx], temperature, alpha)
                    total, count = total + ce * len(idx), count + len(idx)
        for i in active:
            teacher[i] = _forward(server, feats[i])
        loss = float(total) / count if count else None
        if r % cfg.eval_every == 0 or r == rounds:
            record(r, [i for i in range(k) if here[i]])
    if keep_models:
        rec["client_models"], rec["server_model"] = clients, server
    return rec
