"""The results site: ``python -m fedlib.core.site`` (``./run_all.sh --site``) builds static HTML of the executed
notebooks, with a landing page of the three papers' verdicts, using Sphinx with MyST-NB.

For each paper the site shows one profile: ``converged`` where the paper has committed converged results (DTFL,
HASFL), ``quick`` otherwise (HIST). The build never trains:

- it renders the executed notebooks found in ``.executed/<profile>/<paper>/`` (what ``./run_all.sh`` leaves);
- a notebook not found there is executed with ``FEDLIB_CACHE_ONLY=1`` (:func:`fedlib.core.store.cache_only`):
  every record comes from the profile's committed store, and a missing record stops that notebook instead of
  training; its page then says which command computes it. Outputs of these runs go to a scratch folder, never to
  the committed figures.

The landing page and each paper's page are the READMEs' own text (title and "Results at a glance"), so each number
has one home. Links to files outside the site become plain text; figures are copied in.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from .paths import REPO_ROOT

PAPERS = ("hist", "dtfl", "hasfl")
CONF = '''project = "fedlib-notebooks: results"
copyright = "the fedlib-notebooks authors, MIT licence"
extensions = ["myst_nb"]
nb_execution_mode = "off"          # executed notebooks are rendered as they are: the site never trains
nb_output_stderr = "remove"        # progress bars and warnings, not results
myst_enable_extensions = ["dollarmath"]
myst_heading_anchors = 3           # the READMEs' section links (#results-at-a-glance) resolve
html_theme = "alabaster"
html_theme_options = {"page_width": "96%", "body_max_width": "none", "sidebar_width": "240px"}
exclude_patterns = ["_build"]
suppress_warnings = ["mystnb.unknown_mime_type", "myst.header"]
'''


def site_profile(paper: str) -> str:
    """The profile a paper's pages show: ``converged`` when ``figures/converged/metrics`` holds its metrics, else
    ``quick``. Raises ``ValueError`` for an unknown paper."""
    if paper not in PAPERS:
        raise ValueError(f"paper must be one of {PAPERS}, got {paper!r}")
    have = REPO_ROOT / "figures" / "converged" / "metrics"
    return "converged" if any(have.glob(f"{paper}_*.json")) else "quick"


def _section(text: str, heading: str) -> str:
    """The markdown from ``## heading`` to the next ``## `` heading ('' when absent)."""
    m = re.search(rf"^## {re.escape(heading)}\s*$(.*?)(?=^## |\Z)", text, re.M | re.S)
    return m.group(1).strip() if m else ""


def _relink(md: str, src: Path, page_dir: Path, out_dir: Path, notebooks: set) -> str:
    """Rewrite ``md``'s relative links (written from ``src``'s folder) for a page in ``page_dir``: notebooks of
    the site link to their pages, images are copied under ``out_dir/_figures``, anything else becomes text."""
    def image(mo):
        alt, target = mo.group(1), mo.group(2)
        path = (src.parent / target).resolve()
        if not path.is_file():
            return alt
        dest = out_dir / "_figures" / path.relative_to(REPO_ROOT).as_posix().replace("/", "__")
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, dest)
        return f"![{alt}]({os.path.relpath(dest, page_dir)})"

    def link(mo):
        label, target = mo.group(1), mo.group(2)
        if re.match(r"[a-z]+://|#|mailto:", target):
            return mo.group(0)
        stem = Path(target.split("#")[0]).stem
        path = (src.parent / target.split("#")[0]).resolve()
        if path.name == "README.md" and path.parent.name in PAPERS and path.parent.parent.name == "notebooks":
            return f"[{label}]({os.path.relpath(out_dir / path.parent.name / 'index.md', page_dir)})"
        if target.split("#")[0].endswith(".ipynb") and stem in notebooks:
            paper = stem.split("_")[0]
            return f"[{label}]({os.path.relpath(out_dir / paper / (stem + '.ipynb'), page_dir)})"
        return label

    md = re.sub(r"!\[([^\]]*)\]\(([^)\s]+)\)", image, md)
    return re.sub(r"(?<!!)\[([^\]]+)\]\(([^)\s]+)\)", link, md)


def _execute(paper: str, profile: str, nb: Path, out: Path, scratch: Path) -> str:
    """Execute one notebook cache-only (the notebook runner, :func:`fedlib.core.notebooks.run_notebooks`) and copy
    it to ``out``; returns '' or the reason it could not be rendered."""
    from .notebooks import run_notebooks
    env_keys = ("FEDLIB_CACHE_ONLY", "FEDLIB_FIGURES_DIR", "FEDLIB_COMMIT")
    saved = {k: os.environ.get(k) for k in env_keys}
    os.environ.update(FEDLIB_CACHE_ONLY="1", FEDLIB_FIGURES_DIR=str(scratch / profile))
    os.environ.pop("FEDLIB_COMMIT", None)
    try:
        row = run_notebooks(profile, scratch / "executed", only=nb.stem)[0]
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    if row["status"] == "ok":
        shutil.copy2(scratch / "executed" / paper / nb.name, out)
        return ""
    if "CacheMiss" in row["error"] or "no stored result" in row["error"]:   # hist_2 reads hist_1's records
        return f"needs training at {profile} (`./run_all.sh --profile {profile} --only {paper}`)"
    return f"failed: {row['error'][:200]}"


def build_site(out: str | Path, executed: str | Path | None = None, profile: str | None = None,
               execute_missing: bool = True) -> dict:
    """Build the site into ``out`` (``out/html/index.html``).

    Args:
        out: output folder (its ``src`` and ``html`` are replaced). executed: folder of executed notebooks
            ``<paper>/<notebook>.ipynb`` (default ``.executed/<profile>/``). profile: one profile for every paper
            (default :func:`site_profile` per paper). execute_missing: run a missing notebook cache-only.

    Returns:
        ``{"html": path, "seconds": s, "pages": {notebook: "ok" | reason}, "warnings": [Sphinx warning lines]}``.

    Raises:
        ValueError: unknown profile. RuntimeError: sphinx-build failed (its output in the message).
    """
    from .notebooks import PROFILES, list_notebooks
    if profile is not None and profile not in PROFILES:
        raise ValueError(f"profile must be one of {PROFILES}, got {profile!r}")
    t0 = time.perf_counter()
    out = Path(out).resolve()
    src, html = out / "src", out / "html"
    for d in (src, html):
        shutil.rmtree(d, ignore_errors=True)
    src.mkdir(parents=True)
    (src / "conf.py").write_text(CONF)
    nbs = list_notebooks(None)
    names = {nb.stem for nb in nbs}
    pages, landing = {}, ["# Results of three papers on training over heterogeneous edge devices", ""]
    top = (REPO_ROOT / "README.md").read_text()
    glance = _section(top, "Papers at a glance")
    if glance:
        landing += [_relink(glance, REPO_ROOT / "README.md", src, src, names), ""]
    landing += ["```{toctree}", ":maxdepth: 1", ""] + [f"{p}/index" for p in PAPERS] + ["```", ""]
    for paper in PAPERS:
        prof = profile or site_profile(paper)
        readme = REPO_ROOT / "notebooks" / paper / "README.md"
        text = readme.read_text()
        title = text.splitlines()[0].lstrip("# ").strip()
        (src / paper).mkdir()
        intro = _relink(text.split("\n## ", 1)[0].split("\n", 1)[1].strip(), readme, src / paper, src, names)
        body = [f"# {title}", "", intro, "", f"Notebooks of the `{prof}` profile.", ""]
        glance = _section(text, "Results at a glance")
        if glance:
            glance = re.sub(r"\]\(#", "](readme.md#", _relink(glance, readme, src / paper, src, names))
            body += ["## Results at a glance", "", glance, ""]
        body += [f"The evidence behind every verdict, the deviations from the paper and the commands: the paper's "
                 f"[full README](readme.md).", ""]
        toc = ["readme"]
        base = Path(executed) if executed else REPO_ROOT / ".executed" / prof
        for nb in (n for n in nbs if n.parent.name == paper):
            done = base / paper / nb.name
            dest = src / paper / nb.name
            reason = ""
            if done.is_file():
                shutil.copy2(done, dest)
            elif execute_missing:
                reason = _execute(paper, prof, nb, dest, out / "scratch")
            else:
                reason = f"not executed (run `./run_all.sh --profile {prof} --only {nb.stem}`)"
            pages[nb.stem] = reason or "ok"
            if reason:
                dest.unlink(missing_ok=True)
                body += [f"- `{nb.stem}`: {reason}"]
            else:
                toc.append(nb.stem)
        rendered = set(toc[1:])
        (src / paper / "readme.md").write_text(_relink(text, readme, src / paper, src, rendered))
        for stem in toc[1:]:   # the verdict tables' notebook column links to the rendered notebook
            body = ["\n".join(re.sub(rf"`{stem}`", f"[`{stem}`]({stem}.ipynb)", line) if line.startswith("|")
                               else line for line in part.split("\n")) for part in body]
        body += ["", "```{toctree}", ":maxdepth: 1", ""] + toc + ["```", ""]
        (src / paper / "index.md").write_text("\n".join(body))
    (src / "index.md").write_text("\n".join(landing))
    res = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", str(src), str(html)],
                         capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"sphinx-build failed:\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}")
    return {"html": str(html / "index.html"), "seconds": round(time.perf_counter() - t0, 1), "pages": pages,
            "warnings": [w for w in res.stderr.splitlines() if "WARNING" in w]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m fedlib.core.site", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(REPO_ROOT / "site"), help="output folder (default: site/, git-ignored)")
    ap.add_argument("--executed", default=None, help="folder of executed notebooks <paper>/<notebook>.ipynb")
    ap.add_argument("--profile", default=None, choices=("smoke", "quick", "converged", "paper"),
                    help="one profile for every paper (default: converged where committed, else quick)")
    ap.add_argument("--no-execute", action="store_true", help="render only notebooks already executed")
    args = ap.parse_args(argv)
    res = build_site(args.out, args.executed, args.profile, not args.no_execute)
    missing = {k: v for k, v in res["pages"].items() if v != "ok"}
    print(f"site: {res['html']} ({res['seconds']} s; {len(res['pages']) - len(missing)} notebooks rendered)")
    for k, v in missing.items():
        print(f"  {k}: {v}", file=sys.stderr)
    for w in res["warnings"]:
        print(f"  {w}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
