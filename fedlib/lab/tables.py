"""Every verdict table from the committed metrics, by one command: ``python -m fedlib.lab.tables``.

For each paper, :mod:`fedlib.<paper>.claims` names its claims, their rules (:mod:`fedlib.lab.verdicts`) and the
profile whose committed metrics decide them (``PROFILE``: ``figures/metrics/`` for quick, ``figures/<profile>/
metrics/`` otherwise). The command writes

- ``figures/verdicts/<paper>.json``: the machine-readable verdicts (claim, rule, values per seed, word);
- the verdict table of ``notebooks/<paper>/README.md``, between ``<!-- verdicts:begin -->`` and
  ``<!-- verdicts:end -->``;
- the "Papers at a glance" table of the top ``README.md``, between ``<!-- glance:begin -->`` and
  ``<!-- glance:end -->`` (the counts of each word);
- each notebook's Verdict section, between ``<!-- verdict:begin -->`` and ``<!-- verdict:end -->`` in its
  ``## Verdict`` markdown cell (:mod:`fedlib.lab.notebook_verdicts`), so the committed, cleared notebook shows a
  verdict before anything runs.

The site renders those README sections, so one generator feeds all three. ``--check`` writes nothing and exits 1
naming each file that differs from what the generator would write (the test suite runs it).

Usage::

    python -m fedlib.lab.tables            # regenerate
    python -m fedlib.lab.tables --check    # compare only
    python -m fedlib.lab.tables --ledger   # the run-log lines of rules that changed (add each with its reason)
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib
import json
import sys
from pathlib import Path

from fedlib.lab.cli import ArgumentParser
from fedlib.lab.paths import PAPERS, REPO_ROOT
from fedlib.lab.verdicts import MissingMetrics, counts_text, judge, markdown_table
from fedlib.lab.verify import flatten

BEGIN, END = "<!-- verdicts:begin -->", "<!-- verdicts:end -->"
GLANCE_BEGIN, GLANCE_END = "<!-- glance:begin -->", "<!-- glance:end -->"


def metrics_dir(profile: str, root: Path = REPO_ROOT) -> Path:
    """The committed metrics folder of ``profile``: ``figures/metrics`` (quick) or ``figures/<profile>/metrics``."""
    return root / "figures" / "metrics" if profile == "quick" else root / "figures" / profile / "metrics"


def _sources(folder: Path, seed_dirs: list[Path], notebooks: list[str]):
    metrics = {nb: _load(p) for nb in notebooks if (p := folder / f"{nb}.json").exists()}
    extra = {nb: [_load(p) for d in seed_dirs if (p := d / f"{nb}.json").exists()] for nb in notebooks}
    paths = [p for nb in notebooks for p in [folder / f"{nb}.json"] + [d / f"{nb}.json" for d in seed_dirs]
             if p.exists()]
    return metrics, extra, paths


def _load(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: not valid JSON ({e}); regenerate it by rerunning its notebook") from None
    except OSError as e:
        raise ValueError(f"{path}: unreadable ({e.strerror or e})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: holds a JSON {type(data).__name__}, not a notebook's metrics (an object); "
                         f"regenerate it by rerunning its notebook")
    for key, value in flatten(data).items():     # a number written as text (an edit by hand) is never read as one
        if isinstance(value, str) and value.strip() and _is_number(value):
            raise ValueError(f"{path}: {key} holds the text {value!r} where a number belongs; write the number "
                             f"without quotes, or regenerate the file by rerunning its notebook")
    return data


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _column(variant: str, label: str) -> str:
    return label if variant == "ours" else f"{variant} · {label}"


def paper_verdicts(paper: str, root: Path = REPO_ROOT) -> dict:
    """``{"paper", "profile", "metrics", "counts", "columns", "claims": [verdict, ...]}`` from the committed
    metrics of ``paper``'s profile, and, for each of the claims module's ``EXTRA_COLUMNS`` (``({"label",
    "metrics", "seed_dirs", "scale"}, ...)``: another profile or machine, and its scale in words), a column per
    variant named ``"<variant> · <label>"``, judged alone on that folder's metrics (claims whose notebook has no metrics there get no cell).
    A column with ``"within": key`` reads the main metrics' (and their seeds') ``key`` entry instead of a folder
    (a notebook's own second computation, e.g. DTFL's time model at the paper's scale). A column flagged
    ``at_paper_horizon`` / ``at_paper_scale`` is the evidence of the main cells' reasons (:func:`fedlib.lab.verdicts.reason`):
    by variant; at the paper's scale, a claim judged on one model there is the evidence of each of our variants.
    ``counts`` counts the main profile's cells of the paper's rows on its own method only; ``counts_apart`` the
    main profile's other cells (narrower readings, settings the paper does not show, duplicates, our methods).

    Raises:
        ValueError: unknown ``paper``, or a metrics file that is not valid JSON (naming the file).
        :class:`fedlib.lab.verdicts.MissingMetrics`: a committed metrics file of the main profile lacks what a
        claim needs (or is missing).
    """
    if paper not in PAPERS:
        raise ValueError(f"paper must be one of {', '.join(PAPERS)}, got {paper!r}")
    mod = importlib.import_module(f"fedlib.lab.{paper}.claims")
    folder = metrics_dir(mod.PROFILE, root)
    notebooks = sorted({c.notebook for c in mod.CLAIMS})
    # further seeds, each run alone into figures/<profile>/seed<k>/metrics/ (CPU runs of the same profile)
    seed_dirs = sorted(folder.parent.glob("seed[0-9]*/metrics")) if mod.PROFILE != "quick" else \
        sorted((root / "figures").glob("seed[0-9]*/metrics"))
    metrics, extra, paths = _sources(folder, seed_dirs, notebooks)
    for c in mod.CLAIMS:                         # the file the user did not type, named
        if c.notebook not in metrics:
            raise ValueError(f"{(folder / f'{c.notebook}.json').relative_to(root)}: "
                             f"{MissingMetrics(c.id, f'the metrics of notebook {c.notebook}')}")
    labels, more_cols = [], []
    for col in getattr(mod, "EXTRA_COLUMNS", ()):
        if col.get("within"):        # a column kept inside the main metrics files, under the key ``within``
            more = {nb: m[col["within"]] for nb, m in metrics.items() if col["within"] in m}
            more_extra = {nb: [e[col["within"]] for e in es if col["within"] in e] for nb, es in extra.items()}
            if more:
                labels.append(col["label"])
                more_cols.append((col, more, more_extra))
            continue
        more, more_extra, more_paths = _sources(root / col["metrics"], [root / d for d in col.get("seed_dirs", ())],
                                                notebooks)
        if more:
            labels.append(col["label"])
            paths += more_paths
            more_cols.append((col, more, more_extra))
    claims = []
    for c in mod.CLAIMS:
        # the other columns first: a column at the paper's horizon or scale is evidence for the main cell's reason
        cols, evidence = {}, {}
        for col, more, more_extra in more_cols:
            if c.notebook not in more:
                continue
            judged_c = dataclasses.replace(c, horizon="") if col.get("at_paper_horizon") else c
            got = judge(judged_c, more[c.notebook], more_extra.get(c.notebook, ()))
            for variant in sorted(got["cells"], key=lambda k: c.variants.index(k)):   # the claim's column order
                cols[_column(variant, col["label"])] = got["cells"][variant]
                for key, flag in (("horizon", "at_paper_horizon"), ("scale", "at_paper_scale")):
                    if not col.get(flag):
                        continue
                    # the paper's one model at its scale stands for each of ours; several: matched by variant
                    ours = c.variants if key == "scale" and len(got["cells"]) == 1 else (variant,)
                    label = col["label"] if ours == (variant,) else _column(variant, col["label"])   # another model
                    for v in ours:
                        evidence.setdefault(v, {})[key] = (label, got["cells"][variant])
        try:
            v = judge(c, metrics[c.notebook], extra.get(c.notebook, ()), evidence)
        except MissingMetrics as exc:
            raise ValueError(f"{(folder / f'{c.notebook}.json').relative_to(root)}: {exc}") from None
        v["cells"].update(cols)
        claims.append(v)
    return {"paper": paper, "profile": mod.PROFILE, "metrics": [str(p.relative_to(root)) for p in paths],
            "counts": _main_counts(claims, labels), "counts_apart": _main_counts(claims, labels, apart=True),
            "columns": labels, "claims": claims}


def _main_counts(claims: list[dict], labels: list[str], apart: bool = False) -> str:
    """The counts of the main profile's cells only (not the other columns'): the paper's rows, or with ``apart``
    the rest (:func:`fedlib.lab.verdict_tables.counts`)."""
    main = [{**v, "cells": {k: x for k, x in v["cells"].items()
                            if not any(k == lab or k.endswith(f" · {lab}") for lab in labels)}} for v in claims]
    return counts_text(main, apart)


def _replace(text: str, begin: str, end: str, body: str, where: str) -> str:
    if text.count(begin) != 1 or text.count(end) != 1 or text.index(begin) > text.index(end):
        raise ValueError(f"{where}: needs exactly one {begin} ... {end} block")
    head, rest = text.split(begin)
    _, tail = rest.split(end)
    return f"{head}{begin}\n{body}\n{end}{tail}"


def _nb_link(paper: str):
    return lambda nb: f"[`{nb}`]({nb}.ipynb)"


def generated(root: Path = REPO_ROOT) -> dict[Path, str]:
    """Every generated file's path and the text the generator writes there."""
    out: dict[Path, str] = {}
    judged: dict[str, dict] = {}
    glance = ["| paper | verdicts on its claims as the paper words them (apart: narrower readings, settings it does not "
              "show, duplicates, our methods) | our scale | card |", "|---|---|---|---|"]
    for paper in PAPERS:
        mod = importlib.import_module(f"fedlib.lab.{paper}.claims")
        v = judged[paper] = paper_verdicts(paper, root)
        out[root / "figures" / "verdicts" / f"{paper}.json"] = json.dumps(v, indent=1, ensure_ascii=False) + "\n"
        readme = root / "notebooks" / paper / "README.md"
        seeds = max((c["seeds"] for claim in v["claims"] for k, c in claim["cells"].items()
                     if not any(k.endswith(f" · {lab}") or k == lab for lab in v["columns"])), default=1)
        over = f" (a range: over the {seeds} seeds where a claim has several)" if seeds > 1 else " (one seed)"
        scales = "; ".join([f"the paper's: {mod.PAPER_SCALE}", f"main columns: {mod.SUMMARY['scale']}"] +
                           [f"*{c['label']}*: {c['scale']}" for c in getattr(mod, "EXTRA_COLUMNS", ())
                            if c["label"] in v["columns"]])
        body = (f"Scale of each column: {scales}.\n\n"
                f"Profile `{v['profile']}`, from the committed metrics; each cell is the value{over} and the word of "
                f"the rule in "
                f"[`fedlib/lab/verdicts.py`](../../fedlib/lab/verdicts.py). Regenerate with "
                f"`python -m fedlib.lab.tables`.\n\n" + markdown_table(v["claims"], _nb_link(paper)))
        out[readme] = _replace(readme.read_text(), BEGIN, END, body, str(readme.relative_to(root)))
        glance.append(f"| {mod.SUMMARY['title']} ([{mod.SUMMARY['ref']}]({mod.SUMMARY['link']})) | "
                      f"{v['counts']}" + (f" (apart: {v['counts_apart']})" if v["counts_apart"] else "") +
                      f" | {mod.SUMMARY['scale']} | "
                      f"[{paper.upper()}](notebooks/{paper}/README.md) |")
    top = root / "README.md"
    out[top] = _replace(top.read_text(), GLANCE_BEGIN, GLANCE_END, "\n".join(glance), "README.md")
    from fedlib.lab.notebook_verdicts import notebook_texts
    out.update(notebook_texts(judged, root))
    return out


def ledger_lines(paper: str) -> list[str]:
    """The run-log line of each of ``paper``'s claims in its present form: ``- `<id>` `<fingerprint>` — <registered>``
    (the reason follows the date, written by hand). ``notebooks/<paper>/RUN_LOG.md`` lists every one
    (``tests/test_claims_provenance.py``); a rule that changes gets a new fingerprint and so a new line.

    Raises:
        ValueError: unknown ``paper``."""
    if paper not in PAPERS:
        raise ValueError(f"paper must be one of {', '.join(PAPERS)}, got {paper!r}")
    mod = importlib.import_module(f"fedlib.lab.{paper}.claims")
    return [f"- `{c.id}` `{c.fingerprint()}` — {c.registered}" for c in mod.CLAIMS]


def main(argv=None) -> int:
    parser = ArgumentParser(prog="python -m fedlib.lab.tables", description=__doc__.split("\n\n")[0],
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 naming each generated file that differs")
    parser.add_argument("--ledger", action="store_true",
                        help="write nothing; print each rule's run-log line that notebooks/<paper>/RUN_LOG.md lacks")
    args = parser.parse_args(argv)
    if args.check and args.ledger:
        parser.error("--check and --ledger exclude each other; give one")
    if args.ledger:
        for paper in PAPERS:
            log = (REPO_ROOT / "notebooks" / paper / "RUN_LOG.md").read_text()
            for line in ledger_lines(paper):
                if line.split(" — ")[0] not in log:
                    print(f"notebooks/{paper}/RUN_LOG.md: {line}: <why>")
        return 0
    from fedlib.lab.runlock import Busy, exclusive
    try:
        with exclusive(REPO_ROOT / "figures" / "verdicts", "python -m fedlib.lab.tables") if not args.check \
                else contextlib.nullcontext():
            return _write(args.check)
    except (ValueError, MissingMetrics, OSError, Busy) as exc:   # a metrics file named in the message
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _write(check: bool) -> int:
    files = generated()
    stale = [p for p, text in files.items() if not p.exists() or p.read_text() != text]
    if check:
        for p in stale:
            print(f"differs from the generator: {p.relative_to(REPO_ROOT)}", file=sys.stderr)
        if stale:
            print("run: python -m fedlib.lab.tables", file=sys.stderr)
        return 1 if stale else 0
    (REPO_ROOT / "figures" / "verdicts").mkdir(parents=True, exist_ok=True)   # the generator's own output folder
    for p in stale:
        p.write_text(files[p])
        print(f"wrote {p.relative_to(REPO_ROOT)}")
    if not stale:
        print("every table is up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
