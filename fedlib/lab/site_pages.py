"""The site's copy of an executed notebook (:func:`prepare_notebook`), never the committed notebook: widget outputs
dropped so that no page loads a script from another host (:func:`strip_widgets`), the claim and this run's verdict
first (:func:`add_lead`), and the building machine's project folder replaced by a relative path in every output
(:func:`scrub_paths`). Used by :mod:`fedlib.lab.site`."""
from __future__ import annotations

import copy
import re
from pathlib import Path

from fedlib.lab.paths import REPO_ROOT

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
LEAD_TAG = "fedlib-site-lead"
"""Metadata key of the cells :func:`add_lead` inserts (it never inserts twice)."""


def strip_widgets(nb: dict) -> int:
    """Drop every widget output (``application/vnd.jupyter.widget-view+json``: tqdm's notebook progress bars)
    from ``nb``'s cells and the widget state from its metadata, in place; returns the number of outputs dropped.
    Without them MyST-NB adds no widget script (from a CDN) to the page."""
    dropped = 0
    for cell in nb.get("cells", []):
        outs = cell.get("outputs")
        if not outs:
            continue
        keep = [o for o in outs if WIDGET_VIEW not in (o.get("data") or {})]
        dropped += len(outs) - len(keep)
        cell["outputs"] = keep
    nb.get("metadata", {}).pop("widgets", None)
    return dropped


def _replace_in(value, old: str, new: str):
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, list):
        return [_replace_in(v, old, new) for v in value]
    if isinstance(value, dict):
        return {k: _replace_in(v, old, new) for k, v in value.items()}
    return value


def scrub_paths(nb: dict, root: str | Path = REPO_ROOT) -> int:
    """Replace the project folder ``root`` (the building machine's absolute path, as given and resolved) by a
    relative path in every output of ``nb`` (text, markdown, HTML, JSON, tracebacks; not images), in place: a
    safety net, since the notebooks show project-relative paths themselves. ``<root>/figures/a.png`` becomes
    ``figures/a.png`` and ``<root>`` alone ``.``. Returns the number of outputs changed."""
    roots = sorted({str(Path(root)), str(Path(root).resolve())}, key=len, reverse=True)
    changed = 0
    for cell in nb.get("cells", []):
        for i, out in enumerate(cell.get("outputs") or []):
            new = out
            for r in roots:
                text_only = {k: v for k, v in new.items() if k != "data"}
                data = {k: (v if k.startswith("image/") else _replace_in(_replace_in(v, r + "/", ""), r, "."))
                        for k, v in (new.get("data") or {}).items()}
                new = {**_replace_in(_replace_in(text_only, r + "/", ""), r, "."),
                       **({"data": data} if "data" in new else {})}
            if new != out:
                cell["outputs"][i] = new
                changed += 1
    return changed


def _text(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _heading_cell(nb: dict, heading: str) -> int | None:
    """Index of the first markdown cell whose first line is ``## <heading>``."""
    for i, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") == "markdown" and re.match(rf"\s*##\s+{re.escape(heading)}\s*$",
                                                             (_text(cell).lstrip().splitlines() or [""])[0]):
            return i
    return None


def _verdict_markdown(nb: dict, at: int) -> str | None:
    """The markdown the code cells after the ``## Verdict`` cell ``at`` displayed (up to the next markdown
    cell), the rules below the table left out; None when they displayed no markdown."""
    parts = []
    for cell in nb["cells"][at + 1:]:
        if cell.get("cell_type") == "markdown":
            break
        for out in cell.get("outputs") or []:
            md = (out.get("data") or {}).get("text/markdown")
            if md:
                parts.append(md if isinstance(md, str) else "".join(md))
    if not parts:
        return None
    return "\n\n".join(re.split(r"\n\s*Rules \(", p, maxsplit=1)[0].rstrip() for p in parts)


def _first_figure(nb: dict, after: int) -> dict | None:
    """A code cell (input removed) holding the first image output after cell ``after``: the page's headline figure."""
    for cell in nb["cells"][after:]:
        for out in cell.get("outputs") or [] if cell.get("cell_type") == "code" else []:
            if "image/png" in (out.get("data") or {}):
                return {"cell_type": "code", "execution_count": None, "metadata": {LEAD_TAG: "figure",
                        "tags": ["remove-input"]}, "outputs": [out],
                        "source": "# the page's first figure, shown again at the top (MyST-NB skips an empty cell)"}
    return None


def add_lead(nb: dict, committed: str | None = None) -> bool:
    """Make the site's copy of a notebook lead with its claim and verdict, in place: right after the title line
    (``# ...``) a markdown cell with the ``## Claim`` cell's text and the table the ``## Verdict`` cell's code
    displayed (its rules stay in the Verdict section). A notebook with neither section, or without a title, is
    left as it is (False); the cell is inserted once (metadata ``fedlib-site-lead``). Returns whether it
    inserted.

    ``committed``: the paper's generated verdict rows of this notebook's claims (markdown, from
    ``figures/verdicts/<paper>.json``: every committed seed), shown in place of this run's own table so that the
    notebook page and the paper page agree; this run's verdict stays in the Verdict section. The page's first
    figure follows the verdict (a copy of its output), so claim, figure and verdict open the page."""
    cells = nb.get("cells", [])
    if any(c.get("metadata", {}).get(LEAD_TAG) for c in cells):
        return False
    title_at = next((i for i, c in enumerate(cells) if c.get("cell_type") == "markdown"
                     and _text(c).lstrip().startswith("# ")), None)
    claim_at, verdict_at = _heading_cell(nb, "Claim"), _heading_cell(nb, "Verdict")
    claim = _text(cells[claim_at]).lstrip().split("\n", 1)[1].strip() if claim_at is not None and \
        "\n" in _text(cells[claim_at]).lstrip() else ""
    verdict = _verdict_markdown(nb, verdict_at) if verdict_at is not None else None
    if title_at is None or not (claim or verdict):
        return False
    lines = []
    if claim:
        lines += ["**Claim.**", "", claim, ""]
    if committed:
        lines += ["**Verdict** at every committed seed (the paper's table; this run's own, and how it is decided: the "
                  "Verdict section below).", "", committed, ""]
    elif verdict:
        lines += ["**Verdict of this run** (how it is decided: the Verdict section below).", "", verdict, ""]
    title_cell = cells[title_at]
    title, _, rest = _text(title_cell).lstrip().partition("\n")
    lead = {"cell_type": "markdown", "metadata": {LEAD_TAG: True}, "source": "\n".join(lines).rstrip() + "\n"}
    new = [{**title_cell, "source": title}, lead]
    figure = _first_figure(nb, title_at)
    if figure is not None:
        new.append(figure)
    if rest.strip():
        new.append({"cell_type": "markdown", "metadata": {LEAD_TAG: "context"}, "source": rest.strip()})
    if "id" in title_cell:          # nbformat 4.5: cell ids are unique
        for c in new[1:]:
            c["id"] = f"{title_cell['id'][:40]}-{'lead' if c is new[1] else c['metadata'][LEAD_TAG]}"
    cells[title_at:title_at + 1] = new
    if claim:                       # the claim moved to the lead: its section keeps a pointer, not a second copy
        at = _heading_cell(nb, "Claim")
        cells[at] = {**cells[at], "source": "## Claim\n\nAbove, at the top of this page."}
    return True


def fold_plumbing(nb: dict) -> int:
    """Hide what a reader does not need on the site, in place: papermill's injected parameters cell (the values
    this run was given, kept under a fold: ``hide-input``), the notebook's own parameters cell beside it (its
    defaults: ``remove-cell``) and the stream output of the cell that calls ``setup_notebook`` (where this build's
    figures went). Returns the number of cells changed."""
    changed = 0
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        tags = cell.setdefault("metadata", {}).setdefault("tags", [])
        if "injected-parameters" in tags and "hide-input" not in tags:
            tags.append("hide-input")
            changed += 1
        if "parameters" in tags and "remove-cell" not in tags and any(
                "injected-parameters" in c.get("metadata", {}).get("tags", []) for c in nb["cells"]):
            tags.append("remove-cell")           # the defaults; the values in effect are in the injected cell
            changed += 1
        if "setup_notebook(globals()" in _text(cell) and cell.get("outputs"):
            kept = [o for o in cell["outputs"] if o.get("output_type") != "stream"]
            if len(kept) != len(cell["outputs"]):
                cell["outputs"] = kept
                changed += 1
    return changed


def scrub_metadata(nb: dict) -> None:
    """Drop papermill's input and output paths (absolute paths of the building machine) from the metadata."""
    pm = nb.get("metadata", {}).get("papermill")
    if isinstance(pm, dict):
        for key in ("input_path", "output_path"):
            pm.pop(key, None)


def drop_verdict_block(nb: dict) -> None:
    """Remove, in place, the block ``python -m fedlib.lab.tables`` writes into the ``## Verdict`` markdown cell
    (``<!-- verdict:begin -->`` ... ``<!-- verdict:end -->``, :mod:`fedlib.lab.notebook_verdicts`): the committed verdict
    shown in a cleared notebook. On the site the lead shows the committed verdict and the Verdict section this run's
    computed one, so the block would repeat them."""
    from fedlib.lab.story import VERDICT_BEGIN, without_verdict_block
    for c in nb.get("cells", []):
        if c.get("cell_type") == "markdown" and VERDICT_BEGIN in _text(c):
            c["source"] = without_verdict_block(_text(c))


def block_for_pointer(nb: dict) -> bool:
    """An explorer run at the state of its generated Verdict block shows, in its Verdict cell, only a line that
    points at the block (:data:`fedlib.lab.story.AT_BLOCK`); the site drops the block (:func:`drop_verdict_block`),
    so, in place, that output becomes the block's heading and table (its line about the live cell below left out).
    Returns whether it replaced one."""
    from fedlib.lab.notebook_verdicts import LIVE_LINE
    from fedlib.lab.story import AT_BLOCK, VERDICT_BEGIN, VERDICT_END
    at = _heading_cell(nb, "Verdict")
    text = _text(nb["cells"][at]) if at is not None else ""
    if VERDICT_BEGIN not in text:
        return False
    block = text.partition(VERDICT_BEGIN)[2].partition(VERDICT_END)[0].replace(LIVE_LINE, "").strip()
    for cell in nb["cells"][at + 1:]:
        if cell.get("cell_type") == "markdown":
            break
        for out in cell.get("outputs") or []:
            data = out.get("data") or {}
            if AT_BLOCK in _text({"source": data.get("text/markdown", "")}):
                out["data"] = {**data, "text/markdown": block, "text/plain": block}
                return True
    return False


def prepare_notebook(nb: dict, root: str | Path = REPO_ROOT, committed: str | None = None) -> dict:
    """The site's copy of an executed notebook: widgets stripped (:func:`strip_widgets`), the claim and verdict
    lead added (:func:`add_lead`), the plumbing folded (:func:`fold_plumbing`), the project folder scrubbed from
    outputs (:func:`scrub_paths`) and papermill's paths from the metadata (:func:`scrub_metadata`), and the
    Verdict cell's generated block dropped (:func:`drop_verdict_block`: the page shows the computed verdict; an
    explorer's pointer at the block shows the block's table, :func:`block_for_pointer`)."""
    nb = copy.deepcopy(nb)
    strip_widgets(nb)
    block_for_pointer(nb)
    drop_verdict_block(nb)
    add_lead(nb, committed)
    fold_plumbing(nb)
    scrub_paths(nb, root)
    scrub_metadata(nb)
    return nb
