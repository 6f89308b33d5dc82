"""How far the committed metrics move across CPU numerics: ``python -m tests.tools.spread --profile smoke default
threads1 aten-avx2 avx2 sse41`` (from the repository root), a developer's measurement behind the tolerance bands of
:data:`fedlib.lab.verify.RULES` (the README's "Can I reproduce the committed numbers?" holds the numbers).

It reruns the notebooks once per numerics setting of :data:`NUMERICS` (environment variables that make oneDNN, MKL
and ATen choose other kernels, or another thread count; :func:`fedlib.lab.verify.rerun`, a fresh store each) and
prints, per metric, the range across settings.
"""
from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from fedlib.lab.cli import ArgumentParser, writable_dir
from fedlib.lab.notebooks import PROFILES
from fedlib.lab.verify import _fmt, flatten, rerun, rule_for

# Numerics settings: environment variables under which a notebook or test reruns. ATen, oneDNN and MKL pick
# kernels per instruction set, so these stand in for other x86 CPUs ("default"/"sse41": a CPU without AVX2).
NUMERICS = {
    "default": {},
    "threads1": {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"},
    "aten-avx2": {"ATEN_CPU_CAPABILITY": "avx2"},
    "avx2": {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_ENABLE_INSTRUCTIONS": "AVX2"},
    "sse41": {"ATEN_CPU_CAPABILITY": "default", "ONEDNN_MAX_CPU_ISA": "SSE41", "MKL_ENABLE_INSTRUCTIONS": "SSE4_2"},
}


def spread(profile: str, only: str | None, settings: list[str], keep: str | None = None) -> dict:
    """Rerun once per numerics setting and return ``{notebook: {metric: (min, max)}}`` over the numeric metrics
    that differ between settings (those equal everywhere are left out); prints them as a table.

    Raises:
        ValueError: an unknown setting (the message lists :data:`NUMERICS`).
    """
    bad = [s for s in settings if s not in NUMERICS]
    if bad or not settings or len(set(settings)) < len(settings):
        raise ValueError(f"settings must name one or more of {sorted(NUMERICS)}, each once, got {settings!r}")
    tmp = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="fedlib-spread-"))
    runs = {}
    for s in settings:
        print(f"== {s}: {NUMERICS[s] or '(this machine as it is)'}", flush=True)
        rerun(profile, only, tmp / s, NUMERICS[s])
        runs[s] = {p.stem: flatten(json.loads(p.read_text())) for p in (tmp / s / "figures" / "metrics").glob("*.json")}
    out = {}
    for nb in sorted(set().union(*(r.keys() for r in runs.values()))):
        for metric in sorted(set().union(*(r.get(nb, {}).keys() for r in runs.values()))):
            if rule_for(nb, metric).kind == "skip":
                continue
            vals = [runs[s].get(nb, {}).get(metric) for s in settings]
            nums = [v for v in vals if isinstance(v, (int, float)) and not isinstance(v, bool)]
            if len(set(map(repr, vals))) > 1:
                lo, hi = (min(nums), max(nums)) if nums else (None, None)
                out.setdefault(nb, {})[metric] = (lo, hi)
                print(f"{nb}:{metric}  " + "  ".join(f"{s}={_fmt(v)}" for s, v in zip(settings, vals)))
    print(f"\n{sum(len(v) for v in out.values())} metrics differ across {settings}")
    return out


def main(argv: list[str] | None = None) -> int:
    """CLI (module docstring): exit 0 once printed, 2 for bad arguments."""
    parser = ArgumentParser(prog="python -m tests.tools.spread", description=__doc__.splitlines()[0])
    parser.add_argument("settings", nargs="+", metavar="SETTING", help=f"numerics settings: {sorted(NUMERICS)}")
    parser.add_argument("--profile", default="quick", choices=PROFILES, help="default quick")
    parser.add_argument("--only", default=None, help="glob or substring of notebook or paper names")
    parser.add_argument("--keep", type=writable_dir, default=None,
                        help="folder for the reruns, outside the committed folders (default: a new temporary folder)")
    args = parser.parse_args(argv)
    try:
        spread(args.profile, args.only, args.settings, args.keep)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
