"""HASFL's record path on a GPU (run by hand on a lent GPU machine; no test depends on it; prints one JSON line).

For each named committed training record of ``figures/converged/store`` (default: HASFL's decision at seed 0, IID
and non-IID, and one IID random benchmark with mixed batch sizes and cuts), the same run config is trained again
from the start by :func:`fedlib.lab.hasfl.runs.train_run.train_record` on CUDA with the stacked backend, into
a temporary store (the committed one is only read), and compared with the committed record: wall time, rounds,
the convergence point and accuracy. Then ``--slice`` rounds of the first config are timed on CUDA with the loop
backend and with the stacked one (no stop rule), for the speed-up on the same GPU.

Usage (repository root): ``python3 tests/manual/gpu_hasfl_records.py [--keys K ...] [--slice 60]``
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from fedlib.lab.store import ResultStore  # noqa: E402
from fedlib.data import load_fashion_mnist  # noqa: E402
from fedlib.lab.hasfl.runs import train_run  # noqa: E402
from fedlib.lab.hasfl.runs.experiments import STORE_CODE  # noqa: E402
from fedlib.lab.hasfl.runs.train_run import split_config  # noqa: E402
from fedlib.split.records import run_split  # noqa: E402

STORE = Path(__file__).resolve().parents[2] / "figures" / "converged" / "store"
#: HASFL IID (b 30.1 at cut 1), HASFL non-IID (b 30.1 at cut 1), an IID random benchmark (b 36.1, 12 cuts)
KEYS = ("e1edbd41939c", "c6dc6fea6781", "4a7d257b419b")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", nargs="+", default=list(KEYS), help="committed record file name prefixes")
    parser.add_argument("--slice", type=int, default=60, help="rounds of the speed slice (default 60)")
    parser.add_argument("--backend", default="stacked", help="stacked variant (default stacked)")
    parser.add_argument("--device", default="cuda", help="cuda (default), or cpu for a smoke run with --cap")
    parser.add_argument("--cap", type=int, default=0, help="cap each run at this many rounds (smoke runs; 0: none)")
    args = parser.parse_args()
    data = load_fashion_mnist()
    sync = torch.cuda.synchronize if args.device.startswith("cuda") else (lambda: None)
    out = {"gpu": torch.cuda.get_device_name() if args.device.startswith("cuda") else None, "torch": torch.__version__, "backend": args.backend, "runs": []}
    tmp = ResultStore(tempfile.mkdtemp(), code=STORE_CODE)
    first = None
    for prefix in args.keys:
        path = next(STORE.glob(f"{prefix}*.json"))
        env = json.loads(path.read_text())
        cfg, ref = env["config"], env["record"]
        if args.cap:
            cfg = {**cfg, "rounds": min(cfg["rounds"], args.cap), "eval_every": 1}
        first = first or cfg
        t0 = time.perf_counter()
        rec = train_run.train_record(tmp, cfg, data, args.device, args.backend)
        wall = time.perf_counter() - t0
        samples = sum(cfg["b"]) * rec["round"][-1]
        out["runs"].append({"committed": path.name, "setting": cfg["setting"], "b_mean": sum(cfg["b"]) / len(cfg["b"]),
                            "cuts": sorted(set(cfg["cuts"])), "backend": rec.get("backend"),
                            "gpu_wall_s": round(wall, 2), "gpu_rounds": rec["round"][-1],
                            "gpu_samples_per_s": round(samples / wall), "gpu_converged_index": rec["converged_index"],
                            "gpu_converged_acc": rec["converged_acc"], "gpu_final_acc": rec["test_acc"][-1],
                            "cpu_elapsed_s": round(ref["elapsed_s"], 1), "cpu_rounds": ref["round"][-1],
                            "cpu_converged_index": ref["converged_index"], "cpu_converged_acc": ref["converged_acc"],
                            "cpu_final_acc": ref["test_acc"][-1]})
        print(json.dumps(out["runs"][-1]), file=sys.stderr, flush=True)
    scfg = split_config({**first, "rounds": args.slice, "eval_every": args.slice})
    ds = data
    for backend in ("loop", args.backend, "loop", args.backend):       # each twice, interleaved; the first warms up
        sync()
        t0 = time.perf_counter()
        rec = run_split(scfg, ds, args.device, backend=backend)
        sync()
        out.setdefault("slice", {}).setdefault(backend, []).append(round(time.perf_counter() - t0, 3))
    out["slice_rounds"] = args.slice
    out["slice_samples"] = sum(first["b"]) * args.slice
    out["slice_speedup"] = round(out["slice"]["loop"][-1] / out["slice"][args.backend][-1], 2)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
