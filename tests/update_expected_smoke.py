"""Regenerate tests/expected_smoke_metrics*.json from smoke runs under several CPU numerics settings.

    python -m tests.tools.spread --profile smoke default threads1 aten-avx2 avx2 sse41 --keep /tmp/spread
    python tests/update_expected_smoke.py /tmp/spread [/tmp/spread2 ...]

Each folder ``/tmp/spread/<setting>/figures/metrics`` holds one smoke run's metrics (of some notebooks). The expected value of a run's
``final_test_acc`` is the ``default`` setting's; its notebook's **spread** is the largest range (max - min) of any
run's ``final_test_acc`` across the settings, and its **tolerance** is 3 x that spread rounded up to 0.01, at least
0.02 (the floor covers CPUs whose kernels none of the settings imitate, e.g. AVX-512). Entries that are not
training results (``constants``, ``models``, ``theta_hasfl``) are kept from the current files; a notebook's
``learns`` entry (the run that must reach 2x chance accuracy) is kept too, and so is every notebook that none of the
folders holds (``--only hasfl`` updates HASFL's entries alone).
"""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from test_notebooks import run_key  # noqa: E402

FILES = {"dtfl": HERE / "expected_smoke_metrics_dtfl.json", "other": HERE / "expected_smoke_metrics.json"}
TRAINED = ("hist_1", "hist_2", "hist_your_method", "hasfl_4", "hasfl_5", "hasfl_your_method", "dtfl_2", "dtfl_3", "dtfl_4", "dtfl_5",
           "dtfl_6", "dtfl_7", "dtfl_your_method")


def main(*roots: str) -> None:
    """``roots``: spread folders; a notebook's spread is taken over every run of it in any of them (settings named
    ``<root>/<setting>``), and its expected values are those of the first root's ``default`` run."""
    found = {}                                                     # notebook -> {root/setting: metrics file}
    for root in map(Path, roots):
        for f in sorted(root.glob("*/figures/metrics/*.json")):
            found.setdefault(f.stem, {})[f"{root.name}/{f.parents[2].name}"] = f
    for which, path in FILES.items():
        current = json.loads(path.read_text())
        for name, entry in current.items():
            if not name.startswith(TRAINED):
                continue
            if name not in found:                                  # not rerun in these roots: kept as it is
                print(f"kept {name} (no run of it in {roots})")
                continue
            files = found[name]
            settings = list(files)
            default = next((s for s in settings if s.endswith("/default")), None)
            assert default, f"{name}: no run under the 'default' setting ({settings})"
            runs = {s: {run_key(name, r): r["final_test_acc"] for r in json.loads(f.read_text())["runs"]}
                    for s, f in files.items()}
            # HASFL's calibrated rows exist only where the smoke calibration succeeds, which CPU numerics decide
            # (tests/test_notebooks.py accepts them as optional): expected values only for rows of every setting
            common = [k for k in runs[default] if all(k in runs[s] for s in settings)]
            dropped = [k for k in runs[default] if k not in common]
            assert all("-calibrated/" in k for k in dropped), f"{name}: rows missing under some setting: {dropped}"
            spread = max(max(runs[s][k] for s in settings) - min(runs[s][k] for s in settings) for k in common)
            entry["final_test_acc"] = {k: runs[default][k] for k in common}
            entry["spread"] = round(spread, 4)
            entry["spread_settings"] = settings
            entry["tolerance"] = max(0.02, math.ceil(300 * spread - 1e-9) / 100)
        path.write_text(json.dumps(current, indent=1, sort_keys=True) + "\n")
        print(f"wrote {path}")


if __name__ == "__main__":
    main(*sys.argv[1:])
