"""Shared split-learning parts: cuttable models (:mod:`.models`), their measured layer profiles (:mod:`.profile`),
devices / links / servers and their samplers (:mod:`.system`) and the per-device latency terms (:mod:`.latency`)
that HASFL and DTFL compose into rounds."""
from .latency import check_decision, device_terms, memory_bits, server_compute
from .models import MODELS, resnet18, vgg16
from .profile import OPTIMIZER_STATE, LayerProfile, model_profile, profile_model
from .system import EdgeDevices, Servers, SystemSpec, sample_system

__all__ = ["MODELS", "vgg16", "resnet18", "OPTIMIZER_STATE", "LayerProfile", "profile_model", "model_profile",
           "EdgeDevices", "Servers", "SystemSpec", "sample_system", "check_decision", "device_terms",
           "server_compute", "memory_bits"]
