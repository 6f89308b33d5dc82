"""DTFL: dynamic tiering-based federated learning (tiered split training with auxiliary heads, a dynamic tier
scheduler and its time model).

Source: the DTFL paper. :mod:`.run` is Algorithm 1 top-down; :mod:`.tiers` (the tier rule for any M, auxiliary
heads), :mod:`.local_loss` (the local-loss step at the cut, for either backend of the split engine),
:mod:`.timing` (per-tier costs, resource profiles, eq. 5), :mod:`.scheduler` (TierScheduler, profile dynamics, the
system simulation), :mod:`.training` (config, clients' data), the baselines :mod:`.baselines` and :mod:`.fedgkt`
with their time model :mod:`.baseline_time`, :mod:`.privacy` (distance correlation, patch shuffling, the
reconstruction attack). Models: :func:`fedlib.split.resnet_cifar` (md1..md8).
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
