"""The verdict a committed notebook shows before it runs: the generated block of each ``## Verdict`` cell.

Notebooks are committed with outputs cleared, so the Verdict cell's computed table is absent from the file a
reader opens on GitHub or in JupyterLab. :func:`notebook_texts` writes, between ``<!-- verdict:begin -->`` and
``<!-- verdict:end -->`` in the ``## Verdict`` markdown cell:

- a study notebook: its rows of its paper's README table, the rule (:mod:`fedlib.lab.verdicts`) on the committed
  metrics of the paper's profile (:func:`fedlib.lab.tables.paper_verdicts`);
- an explorer (``<paper>_explore``): its claim judged at the page's defaults, the notebook's own parameters cell
  read as the notebook runs it, by ``fedlib.lab.<paper>.explore`` (a prediction of the library's models;
  nothing is trained).

A worked example (``<paper>_your_method``, :func:`fedlib.lab.notebooks.is_worked_example`: a method of your own
beside the paper's) decides no claim and has no Verdict cell; it is left out.

The code cell below each block computes the same rule on the run itself. ``python -m fedlib.lab.tables`` writes the
blocks and ``--check`` compares them, with the README tables.
"""
from __future__ import annotations

import importlib
from pathlib import Path
from typing import Mapping

import nbformat

from fedlib.lab.notebooks import is_worked_example
from fedlib.lab.params import parameter_values
from fedlib.lab.story import VERDICT_BEGIN as BEGIN
from fedlib.lab.story import VERDICT_END as END
from fedlib.lab.story import explore_verdict
from fedlib.lab.verdicts import markdown_table
HEADING = "## Verdict"
"""A notebook of a method of your own (``<paper>_your_method``): no claim of the paper, no Verdict cell."""


def study_block(judged: Mapping, notebook: str) -> str:
    """The block of a study notebook: its claims' rows of the paper's verdict table (``judged``:
    :func:`fedlib.lab.tables.paper_verdicts`' dict). Raises ``ValueError`` when ``notebook`` decides no claim."""
    rows = [v for v in judged["claims"] if v["notebook"] == notebook]
    if not rows:
        raise ValueError(f"notebook {notebook!r} decides no claim of {judged['paper']}")
    where = "figures/metrics/" if judged["profile"] == "quick" else f"figures/{judged['profile']}/metrics/"
    return (f"**The committed run** (profile `{judged['profile']}`, `{where}`; a range is over the seeds judged), "
            f"as the README's table reads it:\n\n" + markdown_table(rows))


LIVE_LINE = "The cell below recomputes it at the controls' state, and again whenever they move."
"""The last line of an explorer's block (:func:`explorer_block`): true in a notebook, not on a static page."""


def explorer_block(paper: str, nb) -> str:
    """The block of ``<paper>_explore``: its claim at the notebook's default parameters."""
    shown = str(explore_verdict(paper, default_result(paper, nb)))
    return ("**At this page's defaults** (the parameters cell's values; a prediction of the library's models, "
            "nothing trained):\n\n" + shown.split("\n\nRules (")[0] +
            "\n\n" + LIVE_LINE)


def default_result(paper: str, nb) -> dict:
    """The result of ``<paper>_explore`` at its defaults: the explorer ``fedlib.lab.<paper>.explore`` builds from
    the notebook's parameters (``default_explorer``), computed at its controls' defaults without widgets."""
    ex = importlib.import_module(f"fedlib.lab.{paper}.explore").default_explorer(parameter_values(nb))
    return ex.compute(**ex.defaults())


def _with_block(text: str, body: str, where: str) -> str:
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        raise ValueError(f"{where}: the Verdict cell needs exactly one {BEGIN} ... {END} block")
    head, rest = text.split(BEGIN)
    return f"{head}{BEGIN}\n{body}\n{END}{rest.split(END)[1]}"


def notebook_texts(judged: Mapping[str, Mapping], root: Path) -> dict[Path, str]:
    """Every notebook of ``notebooks/<paper>/`` but the worked examples, and its text with the Verdict block
    regenerated.

    Raises:
        ValueError: a notebook without exactly one ``## Verdict`` markdown cell holding one block."""
    out = {}
    for paper, verdicts in judged.items():
        for path in sorted((root / "notebooks" / paper).glob("*.ipynb")):
            if is_worked_example(path):                      # no claim of the paper, so no Verdict cell
                continue
            nb = nbformat.reads(path.read_text(), as_version=4)
            cells = [c for c in nb.cells if c.cell_type == "markdown" and c.source.startswith(HEADING)]
            where = str(path.relative_to(root))
            if len(cells) != 1:
                raise ValueError(f"{where}: needs exactly one markdown cell opening with {HEADING!r}")
            body = explorer_block(paper, nb) if path.stem.endswith("_explore") else study_block(verdicts, path.stem)
            cells[0].source = _with_block(cells[0].source, body, where)
            out[path] = nbformat.writes(nb) + "\n"
    return out
