"""HIST's literal reference: one ``nn.Module`` + ``torch.optim.SGD`` per client, one client after another
(Algorithm 1 as written); the tests check that the batched engine gives the same numbers."""
from __future__ import annotations

import time

import torch
import torch.nn.functional as F

from ..core.seeding import numpy_rng, torch_generator
from ..data import TensorDataset
from .config import HistConfig
from .engine import MLPState
from .model import MLP
from .run import Prepared, _new_result, _record, prepare
from .sampling import draw_groups, masks_from_groups, sample_batch_indices


def run_reference(cfg: HistConfig, dataset: TensorDataset | None = None, device: str = "cpu") -> dict:
    """Literal per-client implementation of Algorithm 1 (for tests and the benchmark's baseline).

    Same record as :func:`run_hist`; see :func:`iterate_reference`. Both must agree to float tolerance.
    """
    t0 = time.perf_counter()
    p = prepare(cfg, dataset, device)
    res = _new_result(p)
    for m, glob, train_loss in iterate_reference(p):
        _record(res, p, m, glob, train_loss)
    res["elapsed_s"] = time.perf_counter() - t0
    return res


def iterate_reference(p: "Prepared"):
    """Algorithm 1 written literally, one client at a time; yields like :func:`iterate_hist`.

    Each client is a full-size :class:`fedlib.hist.model.MLP` with its own ``torch.optim.SGD``; eq. (2)/(7) sets
    it to p_j ⊙ x̄, eq. (4) multiplies the autograd gradient by the mask before ``SGD.step()`` (HIST only;
    HFedAvg has no masks), eq. (5) averages state dicts in a Python loop, eq. (6) sums p_j ⊙ x̄_j (HIST) or
    averages (HFedAvg). Uses the same seed streams and batch sampler as :func:`iterate_hist`.
    """
    cfg = p.cfg
    rng_system = numpy_rng(cfg.seed, "system")
    gen = torch_generator(cfg.seed, "data")
    d, c = p.x_train.shape[1], p.init.w2.shape[0]
    glob = {"fc1.weight": p.init.w1.clone(), "fc1.bias": p.init.b1.clone(),
            "fc2.weight": p.init.w2.clone(), "fc2.bias": p.init.b2.clone()}

    def as_state(sd):
        return MLPState(sd["fc1.weight"], sd["fc1.bias"], sd["fc2.weight"], sd["fc2.bias"])

    yield 0, as_state(glob), None
    clients = [MLP(d, cfg.hidden, c).to(p.device) for _ in range(cfg.num_clients)]
    opts = [torch.optim.SGD(m.parameters(), lr=cfg.lr) for m in clients]
    masked = cfg.method == "hist"
    for m in range(1, cfg.global_rounds + 1):
        masks_np = masks_from_groups(draw_groups(cfg.method, cfg.hidden, cfg.num_cells, rng_system), cfg.hidden)
        masks = torch.from_numpy(masks_np).to(p.device, torch.float32)
        pmask = [{"fc1.weight": mk[:, None].expand(cfg.hidden, d), "fc1.bias": mk,
                  "fc2.weight": mk[None, :].expand(c, cfg.hidden), "fc2.bias": torch.ones(c, device=p.device)}
                 for mk in masks]
        for u, model in enumerate(clients):
            mk = pmask[u // cfg.clients_per_cell]
            model.load_state_dict({k: v * mk[k] for k, v in glob.items()})
        loss_sum = 0.0
        for e in range(1, cfg.E + 1):
            if (e - 1) % cfg.H == 0:
                interval = sample_batch_indices(p.client_index, p.sizes, cfg.batch_size, gen, steps=cfg.H)
            idx = interval[(e - 1) % cfg.H]
            for u, (model, opt) in enumerate(zip(clients, opts)):
                opt.zero_grad()
                loss = F.cross_entropy(model(p.x_train[idx[u]]), p.y_train[idx[u]])
                loss.backward()
                loss_sum += float(loss.detach())
                if masked:
                    mk = pmask[u // cfg.clients_per_cell]
                    for name, prm in model.named_parameters():
                        prm.grad.mul_(mk[name])
                if cfg.output_bias == "frozen":
                    model.fc2.bias.grad.zero_()
                opt.step()
            if e % cfg.H == 0:
                for j in range(cfg.num_cells):
                    cell = clients[j * cfg.clients_per_cell:(j + 1) * cfg.clients_per_cell]
                    avg = {k: torch.stack([mm.state_dict()[k] for mm in cell]).mean(0) for k in glob}
                    for mm in cell:
                        mm.load_state_dict(avg)
        edge = [clients[j * cfg.clients_per_cell].state_dict() for j in range(cfg.num_cells)]
        if masked:
            glob = {k: sum(pmask[j][k] * edge[j][k] for j in range(cfg.num_cells)) for k in glob}
            glob["fc2.bias"] = torch.stack([sd["fc2.bias"] for sd in edge]).mean(0)
        else:
            glob = {k: torch.stack([sd[k] for sd in edge]).mean(0) for k in glob}
        glob = {k: v.clone() for k, v in glob.items()}
        yield m, as_state(glob), loss_sum / (cfg.E * cfg.num_clients)
