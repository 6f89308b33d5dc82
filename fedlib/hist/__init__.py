"""HIST and HFedAvg: hierarchical (independent submodel) federated learning.

Source: Fang, Han, Wang, Brinton, Hosseinalipour, Nedić, "Hierarchical Independent Submodel Training"
(HIST), Algorithm 1 and eqs. (2)-(7); the baseline HFedAvg is hierarchical FedAvg (Wang et al., AAAI'22).

System: one cloud server, N cells (edge servers), ``n = U/N`` clients per cell; client ``u`` belongs to
cell ``u // n`` (authors' code). ``t`` counts client SGD iterations; edge aggregation interval ``H``, cloud
aggregation interval ``E`` (a multiple of ``H``). Model: :class:`fedlib.hist.model.MLP` 784-300-10.

HIST's masks partition the 300 hidden neurons uniformly at random into N equal groups at the start of
every global round (eq. 3, constant within the round): submodel j = rows of W1 and entries of b1 for its
neurons + the matching columns of W2. A client of cell j holds and trains *only* that submodel, so a HIST
client step costs about 1/N of an HFedAvg step (the paper's computation saving, realised here).

Engine. All U clients train together with batched tensor operations (``torch.baddbmm`` over a leading
client dimension, gradients written out by hand; no Python loop over clients and no input gradient of the
first layer). :func:`run_reference` in ``tests/reference_hist.py`` is the literal per-client ``nn.Module`` + ``torch.optim.SGD`` version of
eqs. (2)-(7) with full-size masked models; the tests check that both give the same numbers.

Choices where the paper is silent (also in the README's deviations list):

- Output bias b2 (10 values) is not covered by the neuron masks. Default ``output_bias="averaged"``: every
  cell trains b2 and the cloud averages it over cells; ``"frozen"`` keeps it at its initial value (the
  authors' code leaves biases untrained). Eqs. (2)-(7) hold exactly for every partitioned parameter
  (W1, b1, W2).
- Minibatches: each client draws ``batch_size`` samples uniformly *with replacement* from its local data at
  every step (unbiased stochastic gradients, as Assumption 3 states); the paper does not say how batches are
  drawn.
- Initialisation: PyTorch's default ``nn.Linear`` initialisation from the ``model`` seed stream.
- Test accuracy is that of the global model x̄ at every global round (t = mE, m = 0..R).
- Communication is counted with the paper's formulas (Sec. III-B) in units of L0 = one full model: per edge
  aggregation a HIST client uploads L0/N (the shared b2, 10 of 238,510 parameters, is not counted).
"""
from __future__ import annotations

from .config import METHODS, OUTPUT_BIAS, SETTINGS, HistConfig, comm_per_round, rounds_for_budget
from .engine import MLPState, step_flops
from .run import Prepared, iterate_hist, prepare, run_hist

__all__ = ["METHODS", "SETTINGS", "OUTPUT_BIAS", "HistConfig", "comm_per_round", "rounds_for_budget", "MLPState",
           "step_flops", "Prepared", "prepare", "run_hist", "iterate_hist"]
