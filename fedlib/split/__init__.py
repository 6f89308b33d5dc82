"""Shared split-learning parts: cuttable models (:mod:`.models`), their measured layer profiles (:mod:`.profile`),
devices / links / servers and their samplers (:mod:`.system`) and the per-device latency terms (:mod:`.latency`)
that HASFL and DTFL compose into rounds; the split-federated training engine (:mod:`.engine`, configured by
:class:`SplitConfig`; its backends in :mod:`.backends`, the local-loss step a paper plugs in as a
:class:`LocalLossStep`), its literal per-device reference (:mod:`.reference`) and run records (:mod:`.records`)."""
from .config import SplitConfig, build_model
from .engine import (LocalLossStep, SplitState, aggregate, global_model, global_units, init_state, set_decision,
                     train_round)
from .latency import check_decision, device_terms, memory_bits, server_compute
from .models import MODELS, resnet18, vgg16
from .profile import OPTIMIZER_STATE, LayerProfile, model_profile, model_profiles, profile_model
from .records import client_partition, converged_at, draw_batches, evaluate, run_split, time_to_target
from .resnet_cifar import resnet20, resnet38, resnet56, resnet110, resnet_cifar
from .system import EdgeDevices, Servers, SystemSpec, sample_system

__all__ = ["MODELS", "vgg16", "resnet18", "OPTIMIZER_STATE", "LayerProfile", "profile_model", "model_profile", "model_profiles",
           "EdgeDevices", "Servers", "SystemSpec", "sample_system", "check_decision", "device_terms",
           "server_compute", "memory_bits", "SplitConfig", "build_model", "SplitState", "init_state", "train_round",
           "aggregate", "set_decision", "global_units", "global_model", "run_split", "client_partition",
           "draw_batches", "evaluate", "converged_at", "time_to_target"]
__all__ += ["LocalLossStep", "resnet_cifar", "resnet20", "resnet38", "resnet56", "resnet110"]
