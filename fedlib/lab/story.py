"""What a notebook shows a reader: the generated Setup section, its verdict, and tables without raw Python.

A notebook reads as its paper's section (title, Claim, Setup here vs the paper, figures, Verdict, Try this). The
prose is the notebook's own markdown; this module renders the parts computed from the run:

- :func:`setup_section`: the parameters in effect beside the paper's values, with the deviations;
- :func:`verdict_section`: this run's verdicts by :mod:`fedlib.lab.verdicts` (the paper's ``claims`` module);
- :func:`table`: rows of dicts as a markdown table with stated precision and units;
- :func:`display_path`: a path as the reader should see it (relative to the project, never the machine's).

Each returns an :class:`IPython.display.Markdown` object (shown as formatted text in Jupyter and on the site,
as plain markdown under a plain Python interpreter).
"""
from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from fedlib.lab import paths
from fedlib.lab.params import parameter_values
from fedlib.lab.verdicts import MissingMetrics, judge_all, markdown_table


class _Markdown:
    """Markdown text that Jupyter renders (``_repr_markdown_``) and ``print`` shows as it is."""

    def __init__(self, text: str):
        self.data = text

    def _repr_markdown_(self) -> str:
        return self.data

    def __repr__(self) -> str:
        return self.data

    __str__ = __repr__


def markdown(text: str) -> _Markdown:
    """``text`` as a displayable markdown object."""
    return _Markdown(text)


def display_path(path: str | os.PathLike) -> str:
    """``path`` relative to the project root when inside it (``.scratch/quick/metrics/x.json``), else its name
    with ``…/`` in front: a rendered notebook never holds the absolute path of the machine that ran it."""
    p = Path(path).resolve()
    try:
        return str(p.relative_to(paths.REPO_ROOT.resolve()))
    except ValueError:
        return f"…/{p.name}"


def _fmt(v, spec: str | None) -> str:
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if spec and isinstance(v, (int, float)):
        if spec.endswith("%"):
            return f"{100 * v:.{spec[:-1] or 1}f} %"
        return format(v, spec)
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, (list, tuple)):
        return ", ".join(_fmt(x, spec) for x in v)
    return str(v).replace("|", "\\|")


def table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str], formats: Mapping[str, str] | None = None,
          headers: Mapping[str, str] | None = None) -> _Markdown:
    """``rows`` (dicts) as a markdown table of ``columns``.

    Args:
        formats: per column a format spec (``".3f"``, ``".0f"``) or ``"<digits>%"`` for a fraction shown as a
            percentage (``"1%"``: 0.8123 → ``81.2 %``); other floats get 4 significant digits.
        headers: per column the header to show (with its unit, ``"time (s)"``); default the column name.

    Raises:
        ValueError: ``columns`` empty, not strings or repeated; ``rows`` not a list of dicts; ``formats`` or
        ``headers`` naming none of the columns (misspelt: nothing would be formatted; a dict shared by several
        tables may hold keys of columns another table shows); a format spec that is not one.
    """
    if isinstance(columns, str) or not isinstance(columns, (list, tuple)) or not columns:
        raise ValueError(f"columns must be a non-empty list of column names, got {columns!r}")
    if not all(isinstance(c, str) and c for c in columns) or len(set(columns)) != len(columns):
        raise ValueError(f"columns must be distinct non-empty names, got {list(columns)!r}")
    if isinstance(rows, (str, bytes, Mapping)) or not isinstance(rows, Sequence):
        raise ValueError(f"rows must be a list of dicts (one per row), got {type(rows).__name__}")
    for i, r in enumerate(rows):
        if not isinstance(r, Mapping):
            raise ValueError(f"rows[{i}] must be a dict of column -> value, got {type(r).__name__}")
    for what, given in (("formats", formats), ("headers", headers)):
        if given is not None and not isinstance(given, Mapping):
            raise ValueError(f"{what} must be a dict keyed by column, got {type(given).__name__}")
        if given and not set(given) & set(columns):       # keys for columns not shown are allowed (a shared dict)
            raise ValueError(f"{what} name none of the columns ({sorted(given)}); columns: {list(columns)}")
    for c, spec in (formats or {}).items():
        ok = False
        for probe in (1, 0.5):                        # ",d" formats integers only, ".2f" both
            try:
                ok = ok or (isinstance(spec, str) and bool(_fmt(probe, spec)))
            except (ValueError, TypeError):
                pass
        if not ok:
            raise ValueError(f"formats[{c!r}] must be a format spec such as '.3f' or '1%', got {formats[c]!r}")
    formats, headers = formats or {}, headers or {}
    lines = ["| " + " | ".join(headers.get(c, c) for c in columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_fmt(r.get(c), formats.get(c)) for c in columns) + " |" for r in rows]
    return _Markdown("\n".join(lines) if rows else "\n".join(lines) + "\n\n(no rows)")


def threads_in_effect() -> str:
    """``"torch 1, OpenMP 1"``: the thread counts this kernel computes with."""
    import torch
    return f"torch {torch.get_num_threads()}, OpenMP {os.environ.get('OMP_NUM_THREADS', 'unset')}"


def setup_section(namespace: Mapping[str, Any], rows: Sequence[tuple], deviations: Sequence[str] = ()) -> _Markdown:
    """The **Setup here vs the paper** section, generated from the parameters in effect.

    Args:
        namespace: the notebook's ``globals()`` (its parameters after :func:`fedlib.lab.setup_notebook`).
        rows: ``(quantity, here, paper)`` triples; ``here`` is a parameter name (its value is shown), a callable
            of ``namespace`` or a literal string; ``paper`` is the paper's value as text.
        deviations: one sentence per way this run differs from the paper.

    The table always ends with the profile, the threads and the fedlib version. Raises ``KeyError`` naming a
    parameter that ``namespace`` lacks, ``ValueError`` for a row that is not such a triple.
    """
    from fedlib import __version__

    def here(v):
        if callable(v):
            return _fmt(v(namespace), None)
        if isinstance(v, str) and v.isidentifier() and v in namespace:
            return _fmt(namespace[v], None)
        if isinstance(v, str) and v.isidentifier() and v not in namespace:
            raise KeyError(f"setup_section: the notebook has no parameter {v!r}")
        return _fmt(v, None)

    for i, row in enumerate(rows):
        if not isinstance(row, tuple) or len(row) != 3 or not isinstance(row[0], str) or not isinstance(row[2], str):
            raise ValueError(f"setup_section: rows[{i}] must be a (quantity, here, paper) triple with quantity and "
                             f"paper texts, got {row!r}")
    lines = ["| | here | paper |", "|---|---|---|"]
    lines += [f"| {q} | {here(h)} | {p} |" for q, h, p in rows]
    lines += [f"| profile | {namespace.get('profile', paths.active_profile())} | – |",
              f"| threads | {threads_in_effect()} | – |", f"| fedlib | {__version__} | – |"]
    text = "\n".join(lines)
    if deviations:
        text += "\n\n**Deviations from the paper**\n\n" + "\n".join(f"- {d}" for d in deviations)
    return _Markdown(text)


def _module(paper: str, name: str):
    """``fedlib.lab.<paper>.<name>``; ValueError for an unknown paper."""
    if paper not in ("hist", "dtfl", "hasfl"):
        raise ValueError(f"paper must be one of hist, dtfl, hasfl, got {paper!r}")
    return importlib.import_module(f"fedlib.lab.{paper}.{name}")


def verdict_section(paper: str, notebook: str, metrics: Mapping[str, Any],
                    link: Callable[[str], str] | None = None,
                    committed: Sequence[int] | None = None) -> _Markdown:
    """The **Verdict** of this run: the claims that ``notebook`` decides, judged on ``metrics`` (the dict the
    notebook just wrote) by :mod:`fedlib.lab.verdicts`. Metrics that lack what a claim needs give a sentence
    naming the claim and what is missing, and no verdict for any claim (nothing from partial data).

    When this run judges fewer seeds (``metrics["seeds"]``, or ``metrics["seed"]``) than the committed block above
    it (``committed``: its seeds; None reads them from ``figures/verdicts/<paper>.json``, :func:`committed_seeds`),
    the table is headed by the seeds each judges: ``**This run** (seed 0 only; the committed block above judges
    seeds 0, 1)``.

    Raises:
        ValueError: unknown ``paper``. :class:`fedlib.lab.verdicts.UnknownClaim`: ``notebook`` decides no claim.
    """
    mod = _module(paper, "claims")
    try:
        verdicts = judge_all(mod.CLAIMS, {notebook: metrics}, notebook=notebook)
    except MissingMetrics as e:
        return _Markdown(f"**No verdict from this run.** {e}. The profile the paper's verdicts are read at, "
                         f"`{mod.PROFILE}` (`-p profile {mod.PROFILE}`), computes it.")
    rules = "\n".join(f"- *{v['text']}*: {v['rule']}." for v in verdicts)
    text = markdown_table(verdicts, link) + f"\n\nRules ({_rule_doc()}):\n\n" + rules
    ours = _run_seeds(metrics)
    theirs = sorted(committed_seeds(paper, notebook) if committed is None else committed)
    if ours and len(ours) < len(theirs) and set(ours) <= set(theirs):
        text = (f"**This run** ({_seed_words(ours)} only; the committed block above judges "
                f"{_seed_words(theirs)}):\n\n" + text)
    return _Markdown(text)


def _run_seeds(metrics: Mapping[str, Any]) -> list[int]:
    """The seeds a metrics dict names (``seeds``, else ``seed``), sorted; [] when it names none."""
    seeds = metrics.get("seeds", [metrics["seed"]] if "seed" in metrics else [])
    return sorted(s for s in seeds if isinstance(s, int)) if isinstance(seeds, (list, tuple)) else []


def _seed_words(seeds: Sequence[int]) -> str:
    """``seed 0`` or ``seeds 0, 1``."""
    return ("seed " if len(seeds) == 1 else "seeds ") + ", ".join(str(s) for s in seeds)


def committed_seeds(paper: str, notebook: str) -> list[int]:
    """The seeds the committed verdict block of ``notebook`` judges: every ``seed N`` label of its claims' cells in
    ``figures/verdicts/<paper>.json`` (written by ``python -m fedlib.lab.tables``), sorted; [] when the file or the
    notebook's rows are absent."""
    import json

    try:
        data = json.loads((paths.REPO_ROOT / "figures" / "verdicts" / f"{paper}.json").read_text())
    except (OSError, ValueError):
        return []
    labels = {label for row in data.get("claims", []) if row.get("notebook") == notebook
              for cell in row.get("cells", {}).values() for label in cell.get("labels", [])}
    return sorted(int(label.split()[1]) for label in labels
                  if label.startswith("seed ") and label.split()[1].isdigit())


VERDICT_BEGIN, VERDICT_END = "<!-- verdict:begin -->", "<!-- verdict:end -->"
"""The markers of the block ``python -m fedlib.lab.tables`` writes into a notebook's ``## Verdict`` markdown cell (the
committed verdict, :mod:`fedlib.lab.notebook_verdicts`)."""


def without_verdict_block(text: str) -> str:
    """``text`` (a markdown cell's source) with the generated Verdict block removed: what precedes it, then a blank
    line and what follows it (nothing when only the block followed). Text without a block is returned as it is."""
    if VERDICT_BEGIN not in text:
        return text
    head, _, rest = text.partition(VERDICT_BEGIN)
    tail = rest.partition(VERDICT_END)[2]
    return head.rstrip("\n") + ("\n\n" + tail.lstrip("\n") if tail.strip() else "")


def _rule_doc() -> str:
    return ("`fedlib.lab.verdicts`; thresholds from the paper's wording and the measurement's resolution; a rule "
            "marked † was set after the numbers it judges were known")



AT_BLOCK = ("*The controls are at the state of the Verdict above (this page's defaults): the verdict is that table. "
            "Move a control and the verdict at the new state appears here.*")
"""What an explorer's Verdict cell shows at the state its generated block was computed at (:func:`verdict_view`)."""


def verdict_view(paper: str) -> Callable[[Mapping[str, Any] | None], _Markdown]:
    """:func:`explore_verdict` of ``paper`` as an explorer view (``explorer.attach(story.verdict_view("hist"))``:
    the Verdict cell redraws at every change of the controls). Raises ``ValueError`` for an unknown paper."""
    _module(paper, "explore")

    def view(result, values=None):
        """At the state the Verdict block above was computed at (the committed notebook's parameters), one line
        pointing at it; at any other state the verdict there, headed by what differs."""
        moved = None if values is None else _moved_from_block(paper, values)
        if moved is not None and not moved and result is not None:
            return _Markdown(AT_BLOCK)
        shown = explore_verdict(paper, result)
        if moved is None:
            return shown
        what = "; ".join(f"{name} {_short(was)} → {_short(now)}" for name, (was, now) in moved.items())
        return _Markdown(f"**At the controls' state now** (the Verdict above is at the committed defaults; here "
                         f"{what}):\n\n{shown.data}")
    return view


_BLOCK_STATES: dict = {}


def _moved_from_block(paper: str, values: Mapping[str, Any]) -> dict | None:
    """The controls whose ``values`` differ from the state the generated Verdict block of ``<paper>_explore`` was
    computed at (``fedlib.lab.notebook_verdicts.default_result``: the committed notebook's parameters), as
    ``{name: (there, here)}``; None when that state cannot be built here (e.g. no committed store)."""
    if paper not in _BLOCK_STATES:
        import nbformat

        try:
            nb = nbformat.read(paths.REPO_ROOT / "notebooks" / paper / f"{paper}_explore.ipynb", as_version=4)
            _BLOCK_STATES[paper] = _module(paper, "explore").default_explorer(parameter_values(nb)).defaults()
        except (OSError, ValueError, KeyError):
            _BLOCK_STATES[paper] = None
    block = _BLOCK_STATES[paper]
    if block is None:
        return None
    from fedlib.lab.explore import _comparable
    return {k: (block.get(k), v) for k, v in values.items() if _comparable(block.get(k)) != _comparable(v)}


def _short(value) -> str:
    """A control's value in a line: numbers to 3 significant digits, ranges as ``low–high``, text shortened."""
    if isinstance(value, (list, tuple)):
        return "–".join(_short(v) for v in value)
    if isinstance(value, float):
        return f"{value:.3g}"
    text = str(value).strip().replace("\n", "; ")
    return "(typed rows)" if len(text) > 24 else (text or "(empty)")


def explore_verdict(paper: str, result: Mapping[str, Any] | None) -> _Markdown:
    """The **Verdict** of ``<paper>_explore``: the claims of ``fedlib.lab.<paper>.explore`` (``CLAIMS``, or
    ``claims(result)`` where they depend on the state: :class:`fedlib.lab.verdicts.Claim` s whose ``extract`` reads
    the explorer's result dict) judged by
    :mod:`fedlib.lab.verdicts` at the controls' current state (``explorer.result``). The values are the library's
    models' predictions (time model, latency model, the paper's accounting): nothing is trained.

    ``result`` None (the controls hold no valid state) or a result that lacks what a claim needs gives a sentence
    saying so, and no verdict.

    Raises:
        ValueError: unknown ``paper``.
    """
    mod = _module(paper, "explore")
    if result is None:
        return _Markdown("**No verdict at these controls:** the explorer holds no valid state (its error line "
                         "says why).")
    try:
        claims = mod.claims(result) if hasattr(mod, "claims") else mod.CLAIMS
        verdicts = judge_all(claims, {mod.NOTEBOOK: result}, notebook=mod.NOTEBOOK)
    except MissingMetrics as e:
        return _Markdown(f"**No verdict at these controls.** {e}.")
    rules = "\n".join(f"- *{v['text']}*: {v['rule']}. {c.why}" for v, c in zip(verdicts, claims))
    return _Markdown(markdown_table(verdicts) + f"\n\nRules ({_rule_doc()}):\n\n" + rules)
