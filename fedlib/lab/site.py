"""The results site: ``python -m fedlib.lab.site`` (``./run_all.sh --site``) builds static HTML of the executed
notebooks, with a landing page of the three papers' verdicts, using Sphinx with MyST-NB. Its Sphinx configuration
is the committed ``docs/conf.py``.

For each paper the site shows one profile: ``converged`` where the paper has committed converged results (DTFL,
HASFL), ``quick`` otherwise (HIST). The build never trains:

- it renders the executed notebooks found in ``.executed/<profile>/<paper>/`` (what ``./run_all.sh`` leaves) when
  they are current (:func:`is_current`: a finished run of the committed notebook's cells);
- a notebook not found there (or stale) is executed with ``FEDLIB_CACHE_ONLY=1``
  (:func:`fedlib.lab.store.cache_only`): every record comes from the profile's committed store, and a missing
  record stops that notebook instead of training. The executed copy is kept in ``.executed/<profile>/`` for the
  next build; figures and metrics of these runs go to ``.scratch/site/`` (git-ignored), never to the committed
  figures. A notebook that needs a record the store lacks gives ONE line naming the command that trains it
  (:func:`cache_miss_line`); the runner's own output for it is captured.

The site works offline, from its own files: tqdm's notebook progress bars are widget outputs that would make
MyST-NB load require.js and the widget manager from a public CDN, so the site's copy of each notebook drops
every widget output and the widget state (:func:`strip_widgets`; ``docs/conf.py`` also sets no widget scripts and
shows math as TeX source instead of loading MathJax). A widget the site needs later (an explorer) must be served
from the site's own static files. The build fails if a page still loads a script from another host
(:func:`remote_scripts`).

The site's copy of each notebook (never the committed notebook) also: leads with its claim and this run's
verdict (:func:`add_lead`, from the ``## Claim`` cell and the ``## Verdict`` cell's output; a notebook without
those sections is left as it is), has the building machine's project folder replaced by a relative path in
every output (:func:`scrub_paths`), and its markdown links rewritten as the READMEs' are (a link to a file outside
the site, e.g. a module of ``fedlib/``, becomes its text).

The landing page and each paper's page are the READMEs' own text (title and "Results at a glance"; the top
README's generated "Papers at a glance" table, without its generator markers), so each number has one home.
Links to files outside the site become plain text; figures are copied in.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from fedlib.lab import progress
from fedlib.lab.cli import ArgumentParser, committed_folder, existing_dir, positive_int
from fedlib.lab.paths import PAPERS, REPO_ROOT

CONF_DIR = REPO_ROOT / "docs"
"""The folder of the site's Sphinx configuration, ``docs/conf.py`` (``sphinx-build -c``)."""
from fedlib.lab.site_pages import (LEAD_TAG, WIDGET_VIEW, _text, add_lead, fold_plumbing,  # noqa: F401  (re-exported)
                                   prepare_notebook, scrub_metadata, scrub_paths, strip_widgets)  # noqa: F401  (re-exported)


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


def _sources(nb: dict) -> list:
    """The cells' kinds and texts, papermill's injected cell aside and the generated Verdict block emptied (``python
    -m fedlib.lab.tables`` rewrites it when committed metrics change; the cells a run executes stay the same)."""
    from fedlib.lab.story import without_verdict_block
    return [(c.get("cell_type"), without_verdict_block(_text(c)).strip()) for c in nb.get("cells", [])
            if "injected-parameters" not in c.get("metadata", {}).get("tags", [])]


def is_current(executed: str | Path, source: str | Path | None, profile: str | None = None) -> bool:
    """Whether ``executed`` is a finished, error-free papermill run of ``source``'s cells as committed now (the
    parameters papermill injected aside; ``source=None``: of any cells), at ``profile`` when given, and newer than
    every module of ``fedlib/`` (which computes its outputs). A missing, partial (interrupted), failed, stale or
    other-profile copy is not."""
    try:
        done = json.loads(Path(executed).read_text())
    except (OSError, ValueError):
        return False
    pm = done.get("metadata", {}).get("papermill", {})
    if not pm.get("end_time") or pm.get("exception"):
        return False
    if profile is not None and (pm.get("parameters") or {}).get("profile", "quick") != profile:
        return False
    if source is None:
        return True
    if _sources(done) != _sources(json.loads(Path(source).read_text())):
        return False
    # the library computes the outputs (verdicts, tables, figures): an edit of fedlib/ after the run makes it stale
    ran = Path(executed).stat().st_mtime
    return all(p.stat().st_mtime <= ran for p in (REPO_ROOT / "fedlib").rglob("*.py"))


def cache_miss_line(notebook: str, paper: str, profile: str, error: str) -> str | None:
    """The one line a build prints for a notebook stopped by an expected cache miss (``FEDLIB_CACHE_ONLY=1`` and
    a record that is not committed: :class:`fedlib.lab.store.CacheMiss`, or a record another notebook of the
    paper computes), naming the command that trains it; None for any other error."""
    if "CacheMiss" not in error and "no stored result" not in error:
        return None
    return (f"{notebook}: not rendered, a record it reads is not in the committed {profile} store; "
            f"`./run_all.sh --profile {profile} --only {paper}` trains it")


def _execute(paper: str, profile: str, nb: Path, executed: Path, scratch: Path) -> str:
    """Execute one notebook cache-only into ``executed/<paper>/`` by the notebook runner (``python -m
    fedlib.lab.notebooks`` in a child process: its output and its kernels' are captured by :mod:`subprocess`, none
    of it shown); returns '' or the one line that says why it is not rendered."""
    env = {k: v for k, v in os.environ.items() if k != "FEDLIB_COMMIT"}
    env.update(FEDLIB_CACHE_ONLY="1", FEDLIB_FIGURES_DIR=str(scratch / profile))
    run = subprocess.run([sys.executable, "-m", "fedlib.lab.notebooks", "--profile", profile, "--only", nb.stem,
                          "--out", str(executed)], env=env, capture_output=True, text=True)
    if run.returncode == 0:
        return ""
    (executed / paper / nb.name).unlink(missing_ok=True)     # a failed run's partial copy is no page
    output = (run.stdout + run.stderr).strip()
    said = [line for line in output.splitlines() if line.startswith(("[FAILED]", "[skipped]", "error:"))]
    error = said[-1] if said else ""
    line = cache_miss_line(nb.stem, paper, profile, error)
    if line:
        return line
    tail = "\n".join(output.splitlines()[-15:])
    return f"{nb.stem}: failed: {error[:300]}" + (f"\n{tail}" if tail else "")


def remote_scripts(html_dir: str | Path) -> dict[str, list[str]]:
    """``{page: [src, ...]}`` of the scripts a built page loads from another host (``<script src="http...">`` or
    ``//host``); empty when the site loads only its own files."""
    found = {}
    for page in sorted(Path(html_dir).rglob("*.html")):
        srcs = re.findall(r"""<script\b[^>]*\bsrc\s*=\s*["']((?:https?:)?//[^"']+)""", page.read_text(), re.I)
        if srcs:
            found[str(page.relative_to(html_dir))] = srcs
    return found


def _glance(md: str) -> str:
    """A README section as the site shows it: the generator's marker comments (``<!-- glance:begin -->``)
    removed."""
    return re.sub(r"^[ \t]*<!--.*?-->[ \t]*\n?", "", md, flags=re.M).strip()


SITE_PARTS = {"src", "html", "doctrees", "jupyter_execute"}
"""What a build leaves in its output folder: its sources, the HTML and MyST-NB's copies of the notebooks."""


def check_out(out: str | Path) -> Path:
    """The output folder ``out``, resolved, if the builder may write there: a new or empty folder, or one holding
    only what an earlier build left (:data:`SITE_PARTS`). Anything else (``''``, the project itself, a folder of
    the user's) is refused before any work, so a build never deletes a folder it did not make.

    Raises:
        ValueError: ``out`` is empty, a file, or a folder holding anything but ``src/`` and ``html/``.
    """
    if not str(out).strip():
        raise ValueError("--out must name a folder (default site/), got ''")
    path = Path(out).resolve()
    if path.exists() and not path.is_dir():
        raise ValueError(f"--out {out}: is a file; name a new or empty folder")
    from fedlib.lab.cli import committed_folder
    if committed_folder(path):
        raise ValueError(f"--out {out}: is in {committed_folder(path)}, a committed folder; name a folder of your own "
                         f"(default site/, git-ignored)")
    if path.is_dir():
        other = sorted(p.name for p in path.iterdir() if p.name not in SITE_PARTS)
        if other:
            raise ValueError(f"--out {out}: holds {', '.join(other[:5])}{' …' if len(other) > 5 else ''}, not only an "
                             f"earlier site build (src/, html/); name a new or empty folder")
    return path


def committed_verdicts(paper: str, notebook: str, profile: str) -> str | None:
    """The generated verdict rows of ``notebook``'s claims as a markdown table (``figures/verdicts/<paper>.json``,
    written by ``python -m fedlib.lab.tables``), when that file judges ``profile``; else None."""
    from fedlib.lab.verdicts import markdown_table
    path = REPO_ROOT / "figures" / "verdicts" / f"{paper}.json"
    if not path.is_file():
        return None
    data = json.loads(path.read_text())
    rows = [c for c in data.get("claims", []) if c.get("notebook") == notebook]
    if data.get("profile") != profile or not rows:
        return None
    return markdown_table(rows, lambda nb: f"`{nb}`")


def build_site(out: str | Path, executed: str | Path | None = None, profile: str | None = None,
               execute_missing: bool = True, jobs: int = 1) -> dict:
    """Build the site into ``out`` (``out/html/index.html``) with the configuration ``docs/conf.py``.

    Args:
        out: output folder (its ``src`` and ``html`` are replaced). executed: folder of executed notebooks
            ``<paper>/<notebook>.ipynb`` (default ``.executed/<profile>/``). profile: one profile for every paper
            (default :func:`site_profile` per paper). execute_missing: run a missing or stale notebook
            cache-only (into ``executed``; without it a stale copy is rendered as it is). jobs: Sphinx's
            parallel workers (``-j``).

    Returns:
        ``{"html": path, "seconds": s, "pages": {notebook: "ok" | reason}, "warnings": [Sphinx warning lines],
        "times": {"prepare": s, "execute": s, "sphinx": s}}``.

    Raises:
        ValueError: unknown profile. RuntimeError: sphinx-build failed (its output in the message), or a page
            loads a script from another host (:func:`remote_scripts`).
    """
    from fedlib.lab.notebooks import PROFILES, list_notebooks
    if profile is not None and profile not in PROFILES:
        raise ValueError(f"profile must be one of {PROFILES}, got {profile!r}")
    out = check_out(out)
    t0 = time.perf_counter()
    times = {"prepare": 0.0, "execute": 0.0, "sphinx": 0.0}
    src, html = out / "src", out / "html"
    for d in (src, html):
        shutil.rmtree(d, ignore_errors=True)
    src.mkdir(parents=True)
    nbs = list_notebooks(None)
    pages, bodies = {}, {}
    profiles = {paper: profile or site_profile(paper) for paper in PAPERS}
    bases = {paper: Path(executed) if executed else REPO_ROOT / ".executed" / profiles[paper] for paper in PAPERS}
    # the notebooks this build executes (cache-only), known before the first and in the order it runs them (paper
    # by paper, as the loop below): its progress lines count them, and what is left is the work after each
    to_run = [n for paper in PAPERS for n in nbs if n.parent.name == paper and execute_missing
              and not is_current(bases[paper] / paper / n.name, n, profiles[paper])]
    last = {n: progress.last_wall_s(n.stem, profiles[n.parent.name]) for n in to_run}
    if to_run:
        print(f"site: {len(to_run)} of {len(nbs)} notebooks have no current executed copy; each runs once, cache-only "
              f"(all of them on a fresh clone: about 6.5 min on 2 idle cores); the others are rendered as executed", file=sys.stderr, flush=True)
    for paper in PAPERS:
        prof = profiles[paper]
        (src / paper).mkdir()
        toc, missing = ["readme"], []
        base = bases[paper]
        for nb in (n for n in nbs if n.parent.name == paper):
            done = base / paper / nb.name
            reason = ""
            if nb in to_run:
                t = time.perf_counter()
                i = to_run.index(nb) + 1
                print(progress.start_line(f"{paper}/{nb.stem}", i, len(to_run), last[nb],
                                          [last[n] for n in to_run[i:]], what=f"started (cache-only, {prof})"),
                      file=sys.stderr, flush=True)
                with progress.Heartbeat(f"[{i}/{len(to_run)}] {paper}/{nb.stem}", last[nb], stream=sys.stderr):
                    reason = _execute(paper, prof, nb, base, REPO_ROOT / ".scratch" / "site")
                times["execute"] += time.perf_counter() - t
                print(f"[{i}/{len(to_run)}] {paper}/{nb.stem} {'rendered' if not reason else 'not rendered'} "
                      f"({progress.duration(time.perf_counter() - t)}; {len(to_run) - i} left to run)",
                      file=sys.stderr, flush=True)
            elif not is_current(done, None, prof):      # missing, interrupted or failed (a stale copy is rendered)
                reason = f"{nb.stem}: not executed (`./run_all.sh --profile {prof} --only {nb.stem}`)"
            if not reason:
                t = time.perf_counter()
                site_nb = prepare_notebook(json.loads(done.read_text()), committed=committed_verdicts(paper, nb.stem, prof))
                (src / paper / nb.name).write_text(json.dumps(site_nb, ensure_ascii=False))
                times["prepare"] += time.perf_counter() - t
            pages[nb.stem] = reason or "ok"
            if reason:
                print(f"  {reason}", file=sys.stderr, flush=True)
                missing.append(f"- `{nb.stem}`: {reason.split(': ', 1)[1].splitlines()[0]}")
            else:
                toc.append(nb.stem)
        bodies[paper] = (prof, toc, missing)
    rendered = {k for k, v in pages.items() if v == "ok"}
    for nb in (n for n in nbs if n.stem in rendered):   # markdown links: to rendered pages, copied images, or text
        t = time.perf_counter()
        page = src / nb.parent.name / nb.name
        site_nb = json.loads(page.read_text())
        for cell in site_nb["cells"]:
            if cell.get("cell_type") == "markdown":
                cell["source"] = _relink(_text(cell), nb, page.parent, src, rendered)
        page.write_text(json.dumps(site_nb, ensure_ascii=False))
        times["prepare"] += time.perf_counter() - t
    landing = ["# Results of three papers on training over heterogeneous edge devices", ""]
    glance = _glance(_section((REPO_ROOT / "README.md").read_text(), "Papers at a glance"))
    if glance:
        landing += [_relink(glance, REPO_ROOT / "README.md", src, src, rendered), ""]
    landing += ["```{toctree}", ":maxdepth: 1", ""] + [f"{p}/index" for p in PAPERS] + ["```", ""]
    (src / "index.md").write_text("\n".join(landing))
    for paper, (prof, toc, missing) in bodies.items():
        readme = REPO_ROOT / "notebooks" / paper / "README.md"
        text = readme.read_text()
        title = text.splitlines()[0].lstrip("# ").strip()
        intro = _relink(text.split("\n## ", 1)[0].split("\n", 1)[1].strip(), readme, src / paper, src, rendered)
        body = [f"# {title}", ""]
        glance = _glance(_section(text, "Results at a glance"))
        if glance:     # the verdicts first (the whole table in the first screen), then the paper and the notebooks
            glance = re.sub(r"\]\(#", "](readme.md#", _relink(glance, readme, src / paper, src, rendered))
            for stem in toc[1:]:   # a table's bare notebook name links to the rendered notebook
                glance = "\n".join(re.sub(rf"(?<!\[)`{stem}`(?!\])", f"[`{stem}`]({stem}.ipynb)", line)
                                   if line.startswith("|") else line for line in glance.split("\n"))
            body += ["## Results at a glance", "", glance, ""]
        body += ["## The paper", "", intro, "", f"Notebooks of the `{prof}` profile.", ""]
        body += ["The evidence behind every verdict, the deviations from the paper and the commands: the paper's "
                 "[full README](readme.md).", ""] + missing
        (src / paper / "readme.md").write_text(_glance(_relink(text, readme, src / paper, src, set(toc[1:]))))
        body += ["", "```{toctree}", ":maxdepth: 1", ""] + toc + ["```", ""]
        (src / paper / "index.md").write_text("\n".join(body))
    t = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", "-c", str(CONF_DIR), "-d",
                          str(out / "doctrees"), "-j", str(jobs), str(src), str(html)], capture_output=True, text=True)
    times["sphinx"] = time.perf_counter() - t
    if res.returncode != 0:
        raise RuntimeError(f"sphinx-build failed:\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}")
    remote = remote_scripts(html)
    if remote:
        raise RuntimeError(f"pages load scripts from other hosts (the site must work offline): {remote}")
    return {"html": str(html / "index.html"), "seconds": round(time.perf_counter() - t0, 1), "pages": pages,
            "warnings": [w for w in res.stderr.splitlines() if "WARNING" in w],
            "times": {k: round(v, 1) for k, v in times.items()}}


def main(argv: list[str] | None = None) -> int:
    ap = ArgumentParser(prog="python -m fedlib.lab.site", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(REPO_ROOT / "site"), help="output folder (default: site/, git-ignored)")
    ap.add_argument("--executed", type=existing_dir, default=None,
                    help="folder of executed notebooks <paper>/<notebook>.ipynb (an existing one, outside the "
                         "committed folders: a notebook missing there is executed into it; default "
                         ".executed/<profile>/)")
    ap.add_argument("--profile", default=None, choices=("smoke", "quick", "converged", "paper"),
                    help="one profile for every paper (default: converged where committed, else quick)")
    ap.add_argument("--no-execute", action="store_true", help="render only notebooks already executed")
    ap.add_argument("-j", "--jobs", type=positive_int, default=1, help="Sphinx's parallel workers (>= 1; default 1)")
    args = ap.parse_args(argv)
    try:
        check_out(args.out)                                   # before any work
    except ValueError as e:
        ap.error(str(e))
    if args.executed is not None and committed_folder(args.executed) and not args.no_execute:
        ap.error(f"argument --executed: {args.executed} is in {committed_folder(args.executed)}, a committed folder, "
                 f"which the build would execute notebooks into; name a folder of your own, or add --no-execute")
    from fedlib.lab.runlock import Busy, exclusive
    try:      # one build at a time: two would replace one another's src/ and html/ and execute the same notebooks
        with exclusive(REPO_ROOT / "site", "python -m fedlib.lab.site"):
            res = build_site(args.out, args.executed, args.profile, not args.no_execute, jobs=args.jobs)
    except Busy as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    missing = {k: v for k, v in res["pages"].items() if v != "ok"}
    t = res["times"]
    print(f"site: {res['html']} ({res['seconds']} s: executing {t['execute']} s, preparing {t['prepare']} s, "
          f"Sphinx {t['sphinx']} s; {len(res['pages']) - len(missing)} of {len(res['pages'])} notebooks rendered)")
    for w in res["warnings"]:
        print(f"  {w}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
