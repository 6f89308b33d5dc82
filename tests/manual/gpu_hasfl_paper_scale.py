"""HASFL's headline at the paper's scale on one lent GPU (run by hand; no test depends on it).

CIFAR-10 (JPEG copy), VGG-16 at width 1, Table I's 20 devices, IID, seed 0: pilot HASFL and the paper's four
benchmarks (RBS+HAMS, HABS+RMS, RBS+RMS, RBS+RHAMS), each decided as the training notebooks decide it (the
converged profile's pilot and ε, ``fedlib.lab.hasfl.runs.training.decide``) and trained by split learning on the
shared engine (the stacked backend on CUDA) through the result store, charged on Table I's simulated clock
(``fedlib.lab.hasfl.runs.train_plan.train_decision``). Writes, under ``--out``:

- ``store/``: every new record (the pilot is read from the committed ``figures/converged/cifar/store/``, where
  ``notebooks/hasfl/hasfl_6_pilot_decisions.ipynb``'s paper-scale column put it; computed here on the CPU when the
  key has moved);
- ``metrics/hasfl_gpu_paper_scale.json``: one row per method (decision, predicted Θ, converged time and accuracy
  by the paper's rule, time to ``--target``, wall time) and the headline ratios (benchmark / HASFL converged time),
  labelled with the card (``torch.cuda.get_device_name()``), rewritten after every run so a stop loses nothing.

Runs go HASFL first, then the benchmarks; a run is started only when the time left (``--budget``) exceeds the
longest run so far, so the command ends inside the budget and says which methods it left.

Needs the JPEG copy carried to the machine (``--images``, default ``.gpu/cifar-10-images.tar.gz``; it is imported
into ``--data-root`` once) and python3 with torch, torchvision, numpy, scipy, tqdm and filelock. The decisions
need cvxpy (P2's MILPs), which the GPU image may lack: ``--decide-only`` on the CPU machine writes them to
``--decisions`` (default ``.gpu/hasfl_paper_scale_decisions.json``, carried with the copy), and a run that finds
that file trains those decisions (it refuses a file decided on another pilot or ε).

Usage (repository root), the run's ``notebooks/hasfl/RUN_LOG.md`` entry has the exact call::

    .venv/bin/python tests/manual/gpu_hasfl_paper_scale.py --decide-only            # here, before the lease
    python3 tests/manual/gpu_hasfl_paper_scale.py --out "$OUT"                       # on the GPU
    python3 tests/manual/gpu_hasfl_paper_scale.py --device cpu --tiny --out /tmp/x     # the CPU path, minutes
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.environ.get("OUT", "/tmp/gpu_out"), help="output folder (default $OUT)")
    parser.add_argument("--device", default="cuda", help="cuda (default) or cpu (the CPU path, with --tiny)")
    parser.add_argument("--images", default=str(REPO / ".gpu" / "cifar-10-images.tar.gz"),
                        help="the CIFAR-10 JPEG copy (a .tar.gz of class folders)")
    parser.add_argument("--data-root", default=None, help="where the copy is imported (default: fedlib's data folder)")
    parser.add_argument("--epochs", type=float, default=2.0, help="device samples per run, in epochs (cap of the rule)")
    parser.add_argument("--evals", type=int, default=24, help="test evaluations per run (the rule looks at 5)")
    parser.add_argument("--test-subset", type=int, default=2000, help="first n test images (0: all 10,000)")
    parser.add_argument("--target", type=float, default=0.7, help="test accuracy of the time-to-target column")
    parser.add_argument("--budget", type=float, default=540.0, help="seconds for the whole command")
    parser.add_argument("--decisions", default=str(REPO / ".gpu" / "hasfl_paper_scale_decisions.json"),
                        help="decisions written by --decide-only, read when present (no cvxpy needed then)")
    parser.add_argument("--decide-only", action="store_true", help="write the decisions to --decisions and stop")
    parser.add_argument("--methods", nargs="+", default=None,
                        help="train these only (default HASFL and the four benchmarks, in that order)")
    parser.add_argument("--tiny", action="store_true",
                        help="the CPU path at a tiny size: width 1/16, 4 devices, a 1-step pilot, 0.002 epochs")
    args = parser.parse_args()
    t_start = time.perf_counter()
    if args.data_root:
        os.environ["FEDLIB_DATA_DIR"] = args.data_root

    import torch

    from fedlib.data import copy_label, load_dataset
    from fedlib.lab.data import import_cifar10_images
    from fedlib.lab.hasfl.claims import BENCHMARKS
    from fedlib.lab.hasfl.runs.experiments import STORE_CODE
    from fedlib.lab.hasfl.runs.train_plan import train_decision
    from fedlib.lab.hasfl.runs.training import (TrainSettings, bound_constants, decide, pilot, target_eps,
                                                training_problem)
    from fedlib.lab.store import ResultStore
    from fedlib.data.datasets import cifar_available
    from fedlib.data.tensors import data_dir

    out = Path(args.out)
    (out / "metrics").mkdir(parents=True, exist_ok=True)
    if not cifar_available("cifar10"):
        import_cifar10_images(args.images)                       # once: torchvision's layout + PROVENANCE.json
    label = copy_label("cifar10") or "CIFAR-10"
    data = load_dataset("cifar10")
    cuda = args.device.startswith("cuda")
    card = torch.cuda.get_device_name() if cuda else "CPU (the script's CPU path)"
    width, n, pilot_kw = (0.0625, 4, dict(pilot_steps=1, pilot_batch=4, num_batches=2, power_iters=2)) if args.tiny \
        else (1.0, 20, {})
    # the converged profile's training settings (hasfl_4_train_experiments) at the paper's data and width
    s = TrainSettings(model="vgg16", width=width, dataset="cifar10", epochs=0.002 if args.tiny else args.epochs,
                      min_rounds=5 if args.tiny else 30, evals=5 if args.tiny else args.evals,
                      test_subset=200 if args.tiny else args.test_subset, stop_at_convergence=True, **pilot_kw)
    store = ResultStore(out / "store", code=STORE_CODE, read_only=[REPO / "figures" / "converged" / "cifar" / "store"])
    seed, setting = 0, "iid"
    t0 = time.perf_counter()
    record = pilot(store, s, seed, data)                          # a cache hit from the committed paper-scale store
    constants = bound_constants(record, "pilot")
    problem = training_problem(s, constants, target_eps(record, constants, s, n), n, seed)
    decisions_file = Path(args.decisions)
    methods = ("HASFL", *BENCHMARKS)
    unknown = sorted(set(args.methods or ()) - set(methods))
    if unknown:
        raise SystemExit(f"--methods: {', '.join(unknown)} not among {', '.join(methods)}")
    if args.decide_only:
        decided = {"pilot_config": record["config"], "eps": problem.eps, "tiny": args.tiny,
                   "decisions": {m: decide(problem, m, seed) for m in methods}}
        decisions_file.parent.mkdir(parents=True, exist_ok=True)
        decisions_file.write_text(json.dumps(decided, indent=1) + "\n")
        print(f"wrote {decisions_file}: " + "; ".join(f"{m} Θ {d['theta']}" for m, d in decided["decisions"].items()))
        return 0
    carried = json.loads(decisions_file.read_text()) if decisions_file.is_file() else None
    if carried is not None and (carried["tiny"] != args.tiny or abs(carried["eps"] - problem.eps) > 1e-9 * problem.eps):
        raise SystemExit(f"{decisions_file} was decided on another pilot or ε ({carried['eps']} against "
                         f"{problem.eps}); write it again with --decide-only")
    metrics = {"what": f"HASFL's headline at the paper's scale: {label}, VGG-16 at width {width:g}, {n} devices, "
                       f"IID, seed {seed}", "card": card, "torch": torch.__version__, "device": args.device,
               "data_label": label, "data_source": record["data_source"], "settings": vars(args),
               "pilot_s": round(time.perf_counter() - t0, 1), "eps": problem.eps, "rows": [], "left": []}
    longest = 0.0
    metrics["decisions_from"] = str(decisions_file) if carried is not None else "decided here (cvxpy)"
    for method in args.methods or methods:
        left = args.budget - (time.perf_counter() - t_start)
        if left < longest * 1.2:
            metrics["left"].append({"method": method, "why": f"{left:.0f} s left, the longest run took {longest:.0f} s"})
            continue
        decision = carried["decisions"][method] if carried is not None else decide(problem, method, seed)
        t1 = time.perf_counter()
        got = train_decision(store, s, setting, decision, problem, seed, data, args.target, args.device)
        wall = time.perf_counter() - t1
        longest = max(longest, wall)
        row = got["row"]
        metrics["rows"].append({"method": method, "wall_s": round(wall, 1), "b": decision["b"],
                                "cuts": decision["cuts"], "theta_pred_s": decision["theta"],
                                "converged_time_s": row["converged_time_s"], "converged_acc": row["converged_acc"],
                                "time_to_target_s": row["time_to_target_s"], "best_test_acc": row["best_test_acc"],
                                "rounds": row["rounds"], "sim_s": row["sim_s"], "curve": got["curve"]})
        ours = next((r["converged_time_s"] for r in metrics["rows"] if r["method"] == "HASFL"), None)
        metrics["ratios"] = {r["method"]: (r["converged_time_s"] / ours if ours and r["converged_time_s"] else None)
                             for r in metrics["rows"] if r["method"] != "HASFL"}
        metrics["wall_s"] = round(time.perf_counter() - t_start, 1)
        (out / "metrics" / "hasfl_gpu_paper_scale.json").write_text(json.dumps(metrics, indent=1) + "\n")
        print(json.dumps({k: v for k, v in metrics["rows"][-1].items() if k != "curve"}), flush=True)
    metrics["wall_s"] = round(time.perf_counter() - t_start, 1)
    (out / "metrics" / "hasfl_gpu_paper_scale.json").write_text(json.dumps(metrics, indent=1) + "\n")
    print(json.dumps({"card": card, "ratios": metrics.get("ratios"), "left": metrics["left"],
                      "wall_s": metrics["wall_s"], "data": str(data_dir())}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
