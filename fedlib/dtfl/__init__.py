"""DTFL: dynamic tiering-based federated learning (tiered split training with auxiliary heads, a dynamic tier
scheduler and its time model).

Source: DTFL paper, restated in ``shared/spec/dtfl.md``. Modules: :mod:`.tiers` (the tier rule for any M,
auxiliary heads), :mod:`.timing` (per-tier costs of the real model and tensors, resource profiles, eq. 5),
:mod:`.scheduler` (TierScheduler, profile dynamics, the round-by-round system simulation), :mod:`.training`
(DTFL on the shared split engine), :mod:`.reference` (the literal per-client loops DTFL and the engine baselines
are tested against), the baselines :mod:`.baselines` (FedAvg, FedYogi, SplitFed on the engine) and :mod:`.fedgkt`
with their time model :mod:`.baseline_time`, :mod:`.privacy` (distance correlation, patch shuffling, the
reconstruction attack), and the notebook helpers :mod:`.experiments` (setups, cached runs, metrics rows),
:mod:`.compare` (methods and privacy runs), :mod:`.plots` and :mod:`.compare_plots`. The models are
:func:`fedlib.split.resnet_cifar` (ResNet-20/56/110 as modules md1..md8).
"""
from .baseline_time import MethodCosts, method_costs, method_times, simulate_method
from .baselines import BASELINE_CUTS, YogiConfig, run_baseline, yogi_update
from .fedgkt import gkt_client_model, gkt_server_model, kd_loss, run_fedgkt
from .privacy import distance_correlation, dcor_loss, patch_shuffle, psnr, reconstruction_attack
from .scheduler import EMA_ALPHA, SystemRun, TierScheduler, profile_schedule, sample_participants, simulate
from .tiers import MAX_TIERS, aux_head_factory, check_num_tiers, client_modules, tier_cuts, tier_table
from .timing import CASES, CORE_FLOPS, PROFILES, SERVER_FLOPS, ResourceProfile, TierCosts, TimeModel, case_profiles, tier_costs
from .run import algorithm1, dtfl, run_dtfl, run_engine
from .training import DtflConfig, client_data

__all__ = ["MAX_TIERS", "check_num_tiers", "client_modules", "tier_cuts", "tier_table", "aux_head_factory",
           "ResourceProfile", "PROFILES", "CASES", "case_profiles", "TierCosts", "tier_costs", "TimeModel",
           "CORE_FLOPS", "SERVER_FLOPS", "EMA_ALPHA", "SystemRun", "TierScheduler", "profile_schedule", "sample_participants", "simulate", "DtflConfig",
           "client_data", "algorithm1", "dtfl", "run_dtfl", "run_engine", "BASELINE_CUTS",
           "YogiConfig", "yogi_update", "run_baseline", "MethodCosts", "method_costs", "method_times",
           "simulate_method", "gkt_client_model", "gkt_server_model", "kd_loss", "run_fedgkt", "distance_correlation",
           "dcor_loss", "patch_shuffle", "psnr", "reconstruction_attack"]
