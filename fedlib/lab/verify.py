"""Can I reproduce the committed numbers? ``./run_all.sh --verify [--only ...]`` (``python -m fedlib.lab.verify``).

Reruns notebooks into a temporary folder (figures, metrics, executed notebooks and a fresh result store: nothing is
taken from ``.cache/`` and nothing under ``figures/`` is written), then compares every committed metric of
``figures/metrics/<notebook>.json`` (``figures/converged/metrics`` for ``--profile converged``) with the rerun's
value, one line per metric: committed value, rerun value, tolerance, ok. Exit status 1 when any metric is off (or
a notebook fails, or a metric is missing), 0 when all agree, 2 for bad arguments.

Tolerances (:data:`RULES`, first match wins; a metric's name is the last key of its path) come from the measured
spread of the same runs across CPU numerics (``python -m tests.tools.spread``, a developer's measurement; the
measured numbers are in the README, "Can I reproduce the committed numbers?"): exact for what is computed
without training (system models, FLOP and parameter counts, simulated times, configurations), stated bands for
what training produces (accuracy, loss, leakage) and for what is read off a training curve (time, rounds and
communication to a target, ratios of such times). Wall-clock times and machine paths are not compared.

``--compare PATH`` reruns nothing: it takes a run you made (an executed notebook, from JupyterLab or papermill, or
its metrics file) and prints, metric by metric, the committed value, this run's, the tolerance and ok, then the
verdict cells of the notebook's claims that this run would change.
"""
from __future__ import annotations

import fnmatch
import importlib
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from fedlib.lab.cli import ArgumentParser, writable_dir
from fedlib.lab.notebooks import PROFILES
from fedlib.lab.paths import REPO_ROOT
from fedlib.lab.verdicts import MissingMetrics, judge

@dataclass(frozen=True)
class Tolerance:
    """How a rerun value may differ from the committed one.

    Attributes:
        kind: ``skip`` (not compared: wall clock, machine paths), ``exact`` (equal; floats to 1e-9 relative),
            ``abs`` (|rerun - committed| <= value) or ``rel`` (|rerun - committed| <= value * |committed|).
            Under ``abs`` / ``rel``, ``None`` (not reached) must stay ``None``. value: the band. why: where it
            comes from (printed with ``--rules``).
    """

    kind: str
    value: float = 0.0
    why: str = ""

    def text(self) -> str:
        return {"skip": "not compared", "exact": "exact"}.get(self.kind, f"{self.kind} {self.value:g}")

    def ok(self, committed, rerun) -> bool:
        """Whether ``rerun`` is within this tolerance of ``committed`` (scalars: numbers, strings, bools, None)."""
        if self.kind == "skip":
            return True
        num = (int, float)
        if (isinstance(committed, num) and isinstance(rerun, num) and not isinstance(committed, bool)
                and not isinstance(rerun, bool)):
            diff = abs(rerun - committed)
            if self.kind == "abs":
                return diff <= self.value + 1e-12
            if self.kind == "rel":
                return diff <= self.value * abs(committed) + 1e-12
            return diff <= 1e-9 * max(1.0, abs(committed))
        return committed == rerun and type(committed) is type(rerun)


SKIP_WALL = Tolerance("skip", why="wall-clock seconds of this machine")
# Bands, from the measured spread (README, "Can I reproduce the committed numbers?"): the largest range across the
# numerics settings of tests/tools/spread.py at the smoke and quick profiles, times 3, rounded up. Conv nets (DTFL's ResNets, HASFL's VGG / ResNet) drift
# after a few hundred steps; HIST's MLP stays within a few test samples.
ACC_CONV = Tolerance("abs", 0.03, "conv-net training differs across CPUs' kernels (accuracy, loss, leakage)")
ACC_MLP = Tolerance("abs", 0.005, "MLP training differs across CPUs' kernels by a few test samples")
READ_OFF = Tolerance("rel", 0.35, "read off a training curve: one or two evaluations either side of the target")
# HASFL's bound constants come from a short pilot training: measured 6e-5 relative across kernels (beta, theta)
PILOT = Tolerance("rel", 1e-3, "HASFL bound constants from a pilot training (measured <= 6e-5 relative)")

# Exact by construction: what no training produces. Each conv-net metric must match a rule of its own (a test
# checks every committed one); the last catch-all of a conv-net notebook is UNRULED, never a silent "exact".
CONFIG = Tolerance("exact", why="a setting or label of the run (configuration, the paper's numbers)")
PROFILED = Tolerance("exact", why="counted from the model's structure (FLOPs, parameters, bytes), no training")
SIMULATED = Tolerance("exact", why="DTFL's system simulation: times and tiers do not depend on the weights")
DECISION = Tolerance("exact", why="HASFL's decision (batch sizes, cuts) from pilot constants that differ by "
                     "<= 6e-5 relative across kernels")
CURVE = Tolerance("abs", 0.05, "mid-run accuracy of a small auxiliary head on 500 test samples (measured 0.034 "
                  "between an AVX-512 Xeon and an AMD EPYC)")
UNRULED = Tolerance("exact", why="no rule of its own: add one to fedlib.lab.verify.RULES")
# hasfl_6's 200-step pilots at converged, measured 2026-12-07 on an AMD EPYC (python -m tests.tools.spread --profile
# converged --only hasfl_6 default avx2): the same kernels reproduce every value; the AVX2 kernels moved the constants
# by up to 90 % (beta 49.0 -> 93.3), the batch sizes by a few samples, and no cut. The bands stay those of the same
# kernels: verify on another instruction set flags the constants and batch sizes (a known limit, README).
PILOT_6 = Tolerance("rel", 1e-3, "hasfl_6's 200-step pilot constants and predicted Theta: reproduced by the same "
                    "kernels; other kernels move them by up to 90 % (measured AVX2 vs default)")
BATCH_6 = Tolerance("exact", why="hasfl_6's batch sizes from its pilot constants: reproduced by the same kernels; "
                    "other kernels move them by a few samples (measured AVX2 vs default)")
CUTS_6 = Tolerance("exact", why="hasfl_6's cut decisions: the same under the default and AVX2 kernels though the "
                   "pilot constants moved (measured)")
CONFIG_NAMES = ("notebook", "profile", "dataset", "model", "method", "setting", "case", "seed", "seeds", "M", "N",
                "num_clients", "fraction", "tier", "alpha", "cut", "patches", "patch_shuffling", "baseline",
                "iid", "noniid", "paper_client", "paper_server", "claim", "note", "figure", "figures", "versus",
                "width", "constants", "eps_factor", "scale_key", "runs", "beta_estimator",
                "out_of_sample_seeds", "out_of_sample_later_seeds", "draw",
                # the paper-scale column's input shape; hasfl_6's data set, models, widths and number of devices
                "input", "data_label", "models", "widths", "num_devices",
                # a component of your own: its import path and the hash of its module's source
                "scheduler", "scheduler_code",
                # HASFL's out-of-sample and calibration-transfer lists: their rows have rules of their own; empty
                # (a profile without the runs), a list marker
                "runs_out_of_sample", "claims_out_of_sample", "claims_out_of_sample_calibrated", "calibration_transfer")
PROFILED_NAMES = ("params", "MMACs", "client_ratio", "server_ratio", "layers", "forward_gflops",
                  "backward_gflops", "client_gflops", "client_model_mb", "smashed_kib")

RULES: list[tuple[str, str, Tolerance]] = [
    ("*", "elapsed_s", SKIP_WALL), ("*", "*_elapsed_s", SKIP_WALL), ("*", "solve_s", SKIP_WALL),
    ("*", "wall_s", SKIP_WALL), ("*", "*_wall_s", SKIP_WALL),
    ("*", "seconds", SKIP_WALL),
    ("*", "data_source", Tolerance("skip", why="where this machine found the data set")),
    ("hist_*", "*acc*", ACC_MLP), ("hist_*", "comm_to_target", READ_OFF),
    ("hist_3*", "*", Tolerance("rel", 0.05, "constants estimated from a short MLP pilot training")),
    ("hist_*", "*", Tolerance("exact")),
    ("hasfl_[23]*", "*", PILOT),
    # hasfl_6: the cut decisions (its claim), the batch sizes and predicted Theta, the pilot constants at each width
    ("hasfl_6*", "cut1_share", CUTS_6), ("hasfl_6*", "deepest_cut", CUTS_6), ("hasfl_6*", "cuts", CUTS_6),
    ("hasfl_6*", "b", BATCH_6), ("hasfl_6*", "mean_b", BATCH_6), ("hasfl_6*", "theta", PILOT_6),
    ("hasfl_6*", "beta*", PILOT_6), ("hasfl_6*", "eps", PILOT_6), ("hasfl_6*", "G2_sum", PILOT_6),
    ("hasfl_6*", "sigma2_sum", PILOT_6), ("hasfl_6*", "vartheta", PILOT_6),
    ("dtfl_*", "test_acc_aux", CURVE),
    ("hasfl_*", "*acc*", ACC_CONV), ("hasfl_*", "acc_gain", ACC_CONV),
    ("hasfl_*", "floor*", PILOT), ("hasfl_*", "eps", PILOT), ("hasfl_*", "theta*", PILOT),
    ("hasfl_*", "unreachable", PILOT), ("hasfl_*", "pred_ratio*", PILOT),
    ("hasfl_*", "kappa", READ_OFF), ("hasfl_*", "lambda", READ_OFF), ("hasfl_*", "residual", READ_OFF),
    ("hasfl_*", "rounds_*", READ_OFF), ("hasfl_*", "*ratio", READ_OFF), ("hasfl_*", "epochs_to_target", READ_OFF),
    # a run's length and simulated time: where the convergence rule stops it; a calibration's scale
    ("hasfl_*", "rounds", READ_OFF), ("hasfl_*", "sim_s", READ_OFF), ("hasfl_*", "extended_from_epochs", READ_OFF),
    ("hasfl_*", "scale_factor", READ_OFF),
    ("hasfl_*", "b_*", DECISION), ("hasfl_*", "batch", DECISION), ("hasfl_*", "cut", DECISION),
    ("hasfl_*", "cut_*", DECISION), ("hasfl_*", "cuts", DECISION), ("hasfl_*", "L_c", DECISION),
    # HASFL's eps sweep and the two beta estimators: decisions and values from the pilot constants
    ("hasfl_*", "beta", PILOT), ("hasfl_*", "eps_over_floor1", PILOT), ("hasfl_*", "rule", CONFIG),
    ("*", "*acc*", ACC_CONV), ("*", "*loss*", ACC_CONV), ("*", "dcor", ACC_CONV),
    ("*", "psnr_db", Tolerance("abs", 1.0, "attacker trained by a conv net, dB")),
    ("*", "rounds_to_target", READ_OFF), ("*", "*_to_target*", READ_OFF), ("*", "converged_*", READ_OFF),
    # accuracy-derived: the plateau's level, spread and rise over the last fifth of a run; times up to the target
    ("dtfl_*", "plateau_*", ACC_CONV), ("dtfl_*", "comp_time_s", READ_OFF), ("dtfl_*", "comm_time_s", READ_OFF),
    ("dtfl_[56]*", "ratio", READ_OFF), ("dtfl_[56]*", "reduction", Tolerance("abs", 0.35, READ_OFF.why)),
    ("dtfl_[56]*", "dtfl_s", READ_OFF), ("dtfl_[56]*", "baseline_s", READ_OFF),
    ("dtfl_5*", "fed*", READ_OFF), ("dtfl_5*", "splitfed", READ_OFF),
    ("dtfl_*", "mean_tier", SIMULATED), ("dtfl_*", "sim_total_s", SIMULATED), ("dtfl_*", "round", SIMULATED),
    ("dtfl_*", "tier_counts", SIMULATED), ("dtfl_*", "rounds", CONFIG),
    # the untrained system's mean round (a scheduler of your own beside DTFL's; the paper-scale time-model column);
    # a scheduler of your own: its time to target over DTFL's
    ("dtfl_*", "mean_round_s", SIMULATED), ("dtfl_your*", "time_ratio", READ_OFF),
    ("dtfl_*", "change_every", CONFIG),
    *(("*", name, CONFIG) for name in CONFIG_NAMES),
    *(("*", name, PROFILED) for name in PROFILED_NAMES),
    ("dtfl_*", "*", UNRULED), ("hasfl_*", "*", UNRULED),
    ("*", "*", Tolerance("exact")),
]


def rule_for(notebook: str, path: str) -> Tolerance:
    """The first rule of :data:`RULES` whose notebook glob matches ``notebook`` and whose key glob matches the
    metric's name (the last key of ``path``, list indices dropped)."""
    name = path.rsplit(".", 1)[-1].split("[", 1)[0]
    for nb_glob, key_glob, tol in RULES:
        if fnmatch.fnmatch(notebook, nb_glob) and fnmatch.fnmatch(name, key_glob):
            return tol
    raise AssertionError("RULES ends with a catch-all")


def flatten(value, path: str = "") -> dict:
    """``{"runs[3].final_test_acc": 0.61, ...}``: every scalar leaf of a metrics payload by its path."""
    out = {}
    if isinstance(value, dict):
        for k in sorted(value):
            out.update(flatten(value[k], f"{path}.{k}" if path else str(k)))
    elif isinstance(value, list):
        if not value:
            out[path] = "[]"
        for i, v in enumerate(value):
            out.update(flatten(v, f"{path}[{i}]"))
    else:
        out[path] = value
    return out


def compare(notebook: str, committed: dict, rerun: dict | None) -> list[dict]:
    """One row per committed metric: ``{"notebook", "metric", "committed", "rerun", "tolerance", "ok"}``; a
    metric the rerun lacks (or a rerun without metrics) is not ok, and so is a metric only the rerun has."""
    a = flatten(committed)
    b = flatten(rerun) if rerun is not None else {}
    rows = []
    for path in list(a) + [p for p in b if p not in a]:
        tol = rule_for(notebook, path)
        if tol.kind == "skip":
            continue
        here, there = path in a, path in b
        ok = here and there and tol.ok(a[path], b[path])
        rows.append({"notebook": notebook, "metric": path, "committed": a.get(path, "(absent)"),
                     "rerun": b.get(path, "(absent)"), "tolerance": tol.text(), "ok": ok})
    return rows


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def print_rows(rows: list[dict], second: str, show_all: bool, with_notebook: bool) -> list[dict]:
    """Print :func:`compare`'s rows as a table (every row, or with ``show_all`` False the off ones), then the count
    line without its newline; ``second`` heads the second value's column. Returns the rows that are off."""
    def name(r: dict) -> str:
        return f"{r['notebook']}:{r['metric']}" if with_notebook else r["metric"]

    width = max([len(name(r)) for r in rows] + [6])
    print(f"\n{'metric'.ljust(width)}  {'committed':>12}  {second:>12}  {'tolerance':>12}  ok")
    for r in rows:
        if show_all or not r["ok"]:
            print(f"{name(r).ljust(width)}  {_fmt(r['committed']):>12}  {_fmt(r['rerun']):>12}  "
                  f"{r['tolerance']:>12}  {'ok' if r['ok'] else 'OFF'}")
    off = [r for r in rows if not r["ok"]]
    print(f"\n{len(rows) - len(off)} of {len(rows)} metrics within tolerance, {len(off)} off", end="")
    return off


def committed_dir(profile: str) -> Path:
    """Where ``profile``'s committed metrics live: ``figures/metrics`` (quick) or ``figures/<profile>/metrics``."""
    return REPO_ROOT / "figures" / ("" if profile == "quick" else profile) / "metrics"


def rerun(profile: str, only: str | None, out: Path, env: dict | None = None) -> int:
    """Run the notebooks (``python -m fedlib.lab.notebooks``) in a child process whose figures, metrics, result
    store and executed notebooks all go under ``out``; ``env`` is added to its environment. Returns its exit code."""
    child = dict(os.environ, FEDLIB_FIGURES_DIR=str(out / "figures"), FEDLIB_CACHE_DIR=str(out / "cache"),
                 **(env or {}))
    child.pop("FEDLIB_METRICS_DIR", None)
    child.pop("FEDLIB_COMMIT", None)
    cmd = [sys.executable, "-m", "fedlib.lab.notebooks", "--profile", profile, "--out", str(out / "executed")]
    if only:
        cmd += ["--only", only]
    return subprocess.call(cmd, env=child, cwd=REPO_ROOT)


def verify(profile: str, only: str | None, keep: str | None = None, show_all: bool = True) -> int:
    """Rerun and compare (module docstring). Returns the exit status: 0 all ok, 1 something off.

    Raises:
        ValueError: ``only`` matches no notebook; no committed metrics for the selected notebooks.
    """
    from fedlib.lab.notebooks import list_notebooks

    nbs = list_notebooks(only)
    folder = committed_dir(profile)
    committed = {p.stem: read_metrics(folder / f"{p.stem}.json") for p in nbs if (folder / f"{p.stem}.json").is_file()}
    if not committed:
        have = sorted(q for q in ("quick", "converged", "paper") if any(committed_dir(q).glob("*.json")))
        raise ValueError(f"no committed metrics in {folder} for {[p.stem for p in nbs]}: nothing to compare at "
                         f"profile {profile!r}; profiles with committed metrics: {', '.join(have)}")
    tmp = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="fedlib-verify-"))
    print(f"== rerunning {len(nbs)} notebook(s) at '{profile}' into {tmp} (fresh result store)", flush=True)
    status = rerun(profile, only, tmp)
    rows = []
    for name, payload in committed.items():
        path = tmp / "figures" / "metrics" / f"{name}.json"
        rows += compare(name, payload, read_metrics(path) if path.is_file() else None)
    off = print_rows(rows, "rerun", show_all, with_notebook=True)
    print("" if status == 0 else "; a notebook failed")
    return 0 if not off and status == 0 else 1


def read_metrics(path: Path) -> dict:
    """A metrics file's JSON object. Raises ``ValueError`` naming ``path`` when it is not one (truncated, edited)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a readable metrics file ({exc}); regenerate it by rerunning its notebook") \
            from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: holds a JSON {type(data).__name__}, not a notebook's metrics (an object)")
    return data


def run_metrics(path: Path) -> tuple[str, str, dict]:
    """``(notebook, profile, metrics)`` of a run: ``path`` is a metrics file (``<notebook>.json``, as a notebook
    writes it) or an executed notebook (a Lab run or a papermill output), whose metrics file is the one its first
    output line names (``profile P: figures -> FOLDER``: ``FOLDER/metrics/<notebook>.json``, or
    ``$FEDLIB_METRICS_DIR``'s when that was set for the run: pass that file instead).

    Raises:
        ValueError: the file is neither, cannot be read, or its metrics file is missing (the message names it)."""
    if not path.is_file():
        raise ValueError(f"{path}: no such file (give a metrics file <notebook>.json or an executed notebook)")
    try:
        doc = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a JSON metrics file or notebook ({exc})") from None
    if path.suffix == ".ipynb":
        if not isinstance(doc, dict) or not isinstance(doc.get("cells"), list):
            raise ValueError(f"{path}: not a Jupyter notebook (no cells)")
        code = "".join("".join(c.get("source", "")) for c in doc["cells"] if c.get("cell_type") == "code")
        named = re.search(r'setup_notebook\(globals\(\), "\w+", "(\w+)"\)', code)
        shown = "".join("".join(o.get("text", "")) for c in doc["cells"] for o in c.get("outputs", ())
                        if o.get("output_type") == "stream")
        where = re.search(r"^profile (\w+): figures -> (\S+)", shown, re.M)
        if named is None or where is None:
            raise ValueError(f"{path}: not an executed study notebook of this project (no setup_notebook call with "
                             f"its name, or no 'profile ...: figures -> ...' output line: run it first)")
        folder = Path(where.group(2))
        metrics = (folder if folder.is_absolute() else REPO_ROOT / folder) / "metrics" / f"{named.group(1)}.json"
        if not metrics.is_file():
            raise ValueError(f"{path}: its metrics file {metrics} is missing (moved, or written to "
                             f"$FEDLIB_METRICS_DIR: pass that file)")
        return (*run_metrics(metrics)[:2], read_metrics(metrics))
    if not isinstance(doc, dict) or not isinstance(doc.get("notebook"), str) or not isinstance(doc.get("profile"), str):
        raise ValueError(f"{path}: not a metrics file of a notebook (it needs the string keys 'notebook' and "
                         f"'profile')")
    return doc["notebook"], doc["profile"], doc


def verdict_changes(notebook: str, committed: dict, run: dict) -> list[dict]:
    """The verdict cells of ``notebook``'s claims whose word differs between ``committed`` and ``run`` metrics,
    each judged alone (the seeds each file holds; the committed tables also join further seeds' files):
    ``[{"claim", "variant", "committed", "run"}]``. A claim one side cannot judge shows what it lacks."""
    paper = notebook.split("_", 1)[0]
    try:
        claims = importlib.import_module(f"fedlib.lab.{paper}.claims").CLAIMS
    except ModuleNotFoundError:
        return []
    out = []
    for claim in (c for c in claims if c.notebook == notebook):
        words = []
        for metrics in (committed, run):
            try:
                words.append({v: cell["word"] for v, cell in judge(claim, metrics)["cells"].items()})
            except MissingMetrics as exc:
                words.append({"*": f"no verdict ({exc})"})
        for variant in sorted(set(words[0]) | set(words[1])):
            a, b = words[0].get(variant, "(absent)"), words[1].get(variant, "(absent)")
            if a != b:
                out.append({"claim": claim.text, "variant": variant, "committed": a, "run": b})
    return out


def compare_run(path: str, show_all: bool = True) -> int:
    """``--compare PATH``: a run (a metrics file or an executed notebook) beside the committed metrics of its
    notebook and profile, metric by metric within the tolerances of :data:`RULES`, then the verdict cells that
    would change. Returns 0 when every metric is within tolerance, 1 otherwise.

    Raises:
        ValueError: as :func:`run_metrics`; no committed metrics for that notebook and profile."""
    notebook, profile, run = run_metrics(Path(path))
    committed_path = committed_dir(profile) / f"{notebook}.json"
    if not committed_path.is_file():
        raise ValueError(f"{path}: no committed metrics for {notebook} at profile {profile!r} ({committed_path} "
                         f"is missing); committed profiles: quick (figures/metrics), converged, paper")
    committed = read_metrics(committed_path)
    rows = compare(notebook, committed, run)
    print(f"== {notebook} at '{profile}': {path} against {committed_path.relative_to(REPO_ROOT)}")
    off = print_rows(rows, "this run", show_all, with_notebook=False)
    print()
    changes = verdict_changes(notebook, committed, run)
    print(f"\nverdict cells that would change ({notebook}'s claims, each file judged on the seeds it holds): "
          f"{len(changes) or 'none'}")
    for c in changes:
        print(f"- {c['claim']} [{c['variant']}]: {c['committed']} -> {c['run']}")
    return 0 if not off else 1


def main(argv: list[str] | None = None) -> int:
    """CLI (module docstring)."""
    parser = ArgumentParser(prog="python -m fedlib.lab.verify", description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default=None, choices=PROFILES, help="default quick")
    parser.add_argument("--only", default=None, help="glob or substring of notebook or paper names")
    parser.add_argument("--keep", type=writable_dir, default=None,
                        help="folder for the rerun, outside the committed folders (default: a new temporary folder)")
    parser.add_argument("--failures", action="store_true", help="print only the metrics that are off")
    parser.add_argument("--rules", action="store_true", help="print the tolerance rules and exit")
    parser.add_argument("--compare", default=None, metavar="PATH",
                        help="compare a run you made (an executed notebook or its metrics file) with the committed "
                             "metrics of its notebook and profile, and list the verdict cells that would change; "
                             "reruns nothing")
    args = parser.parse_args(argv)
    given = [f"--{n}" for n in ("profile", "only", "keep") if getattr(args, n) is not None] + \
        (["--failures"] if args.failures else [])
    if args.rules and (given or args.compare is not None):   # options that do not apply are refused, not dropped
        parser.error(f"argument --rules: prints the rules and runs nothing; it takes no "
                     f"{', '.join(given + (['--compare'] if args.compare is not None else []))}")
    if args.compare is not None and [g for g in given if g != "--failures"]:
        parser.error(f"argument --compare: the run names its notebook and profile; it takes no "
                     f"{', '.join(g for g in given if g != '--failures')}")
    args.profile = args.profile or "quick"
    if args.rules:
        for nb, key, tol in RULES:
            print(f"{nb:12} {key:18} {tol.text():14} {tol.why}")
        return 0
    try:
        if args.compare is not None:
            return compare_run(args.compare, show_all=not args.failures)
        return verify(args.profile, args.only, args.keep, show_all=not args.failures)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
