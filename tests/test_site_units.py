"""The results site's builder (fedlib.lab.site) tested directly, not through a notebook run: the profile each
paper shows, README sections, link rewriting, the plumbing fold, and one whole build from a folder of executed
notebooks made by hand (one notebook current, the others not executed), Sphinx included."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from fedlib.lab import site
from fedlib.lab.paths import REPO_ROOT


# --- which profile a paper's pages show ---------------------------------------------------------------------------

def test_site_profile_is_converged_where_converged_metrics_are_committed(tmp_path, monkeypatch):
    monkeypatch.setattr(site, "REPO_ROOT", tmp_path)
    (tmp_path / "figures" / "converged" / "metrics").mkdir(parents=True)
    (tmp_path / "figures" / "converged" / "metrics" / "dtfl_2_table1.json").write_text("{}")
    (tmp_path / "figures" / "converged" / "metrics" / "hasfl_notes.txt").write_text("")   # not metrics
    assert [site.site_profile(p) for p in site.PAPERS] == ["quick", "converged", "quick"]
    with pytest.raises(ValueError, match=r"paper must be one of \('hist', 'dtfl', 'hasfl'\), got 'fedavg'"):
        site.site_profile("fedavg")


def test_site_profile_of_the_committed_results():
    # DTFL and HASFL have committed converged metrics, HIST only quick ones (figures/converged/metrics)
    assert {p: site.site_profile(p) for p in site.PAPERS} == {"hist": "quick", "dtfl": "converged",
                                                               "hasfl": "converged"}


# --- README sections ------------------------------------------------------------------------------------------------

def test_section_runs_from_its_heading_to_the_next_one_of_the_same_level():
    md = ("# Title\n\nIntro.\n\n## Results (quick)\n\n| a |\n|---|\n\n### Detail\n\nkept\n\n## Next\n\nother\n"
          "## Last\nend")
    assert site._section(md, "Results (quick)") == "| a |\n|---|\n\n### Detail\n\nkept"    # regex characters
    assert site._section(md, "Next") == "other"
    assert site._section(md, "Last") == "end"                                                 # to the end
    assert site._section(md, "Missing") == "" and site._section(md, "Title") == ""
    assert site._section("## Results\n", "Results") == ""
    assert site._section("## Results x\ntext", "Results") == ""                              # whole heading only


# --- links ----------------------------------------------------------------------------------------------------------

def test_relink_rewrites_each_kind_of_link_for_the_page(tmp_path):
    src = REPO_ROOT / "notebooks" / "hist" / "README.md"
    out = tmp_path / "src"
    page = out / "hist"
    page.mkdir(parents=True)
    md = "\n".join([
        "[rendered](hist_1_experiments.ipynb)",
        "[with anchor](hist_1_experiments.ipynb#setup)",
        "[not rendered](hist_2_figures.ipynb)",
        "[other paper](../dtfl/README.md)",
        "[a module](../../fedlib/lab/site.py)",
        "[web](https://arxiv.org/abs/1)",
        "[anchor](#results-at-a-glance)",
        "[mail](mailto:a@b.c)",
        "![a figure](../../figures/hist_fig3_comm_to_target.png)",
        "![gone](../../figures/no_such_figure.png)",
    ])
    got = site._relink(md, src, page, out, {"hist_1_experiments"}).split("\n")
    assert got == [
        "[rendered](hist_1_experiments.ipynb)",
        "[with anchor](hist_1_experiments.ipynb)",
        "not rendered",
        "[other paper](../dtfl/index.md)",
        "a module",
        "[web](https://arxiv.org/abs/1)",
        "[anchor](#results-at-a-glance)",
        "[mail](mailto:a@b.c)",
        "![a figure](../_figures/figures__hist_fig3_comm_to_target.png)",
        "gone",
    ]
    copied = out / "_figures" / "figures__hist_fig3_comm_to_target.png"
    assert copied.read_bytes() == (REPO_ROOT / "figures" / "hist_fig3_comm_to_target.png").read_bytes()
    # from the landing page (out itself), a notebook of another folder
    top = site._relink("[n](notebooks/dtfl/dtfl_2_table1.ipynb)", REPO_ROOT / "README.md", out, out,
                       {"dtfl_2_table1"})
    assert top == "[n](dtfl/dtfl_2_table1.ipynb)"


# --- the plumbing fold ---------------------------------------------------------------------------------------------

def _code(src, tags=(), outputs=()):
    return {"cell_type": "code", "metadata": {"tags": list(tags)}, "source": src, "outputs": list(outputs)}


def test_fold_plumbing_removes_the_defaults_cell_only_when_papermill_injected_the_values():
    defaults = _code("profile = 'quick'", ["parameters"])
    injected = _code("profile = 'converged'", ["injected-parameters"])
    nb = {"cells": [json.loads(json.dumps(defaults)), json.loads(json.dumps(injected))]}
    assert site.fold_plumbing(nb) == 2
    assert nb["cells"][0]["metadata"]["tags"] == ["parameters", "remove-cell"]
    assert nb["cells"][1]["metadata"]["tags"] == ["injected-parameters", "hide-input"]
    assert site.fold_plumbing(nb) == 0                                    # once
    alone = {"cells": [json.loads(json.dumps(defaults)), {"cell_type": "markdown", "source": "x"}]}
    assert site.fold_plumbing(alone) == 0                                 # not run by papermill: the defaults stay
    assert alone["cells"][0]["metadata"]["tags"] == ["parameters"]
    no_meta = {"cells": [{"cell_type": "code", "source": "print(1)", "outputs": []}]}
    assert site.fold_plumbing(no_meta) == 0 and no_meta["cells"][0]["metadata"] == {"tags": []}


def test_scrub_metadata_drops_only_papermills_paths():
    nb = {"metadata": {"papermill": {"input_path": "/a", "output_path": "/b", "parameters": {"profile": "quick"}},
                       "kernelspec": {"name": "k"}}}
    site.scrub_metadata(nb)
    assert nb["metadata"] == {"papermill": {"parameters": {"profile": "quick"}}, "kernelspec": {"name": "k"}}
    for bare in ({}, {"metadata": {}}, {"metadata": {"papermill": None}}):
        site.scrub_metadata(bare)                                         # nothing to drop: no error


# --- one whole build -------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """build_site at quick from a folder holding one executed notebook (hist_3_bounds, made by hand: the
    committed cells and a finished papermill run, no outputs) and nothing else; nothing is executed."""
    tmp = tmp_path_factory.mktemp("site")
    executed = tmp / "executed"
    (executed / "hist").mkdir(parents=True)
    nb = json.loads((REPO_ROOT / "notebooks" / "hist" / "hist_3_bounds.ipynb").read_text())
    nb["metadata"]["papermill"] = {"end_time": "2025-01-01T00:00:00", "exception": None,
                                   "parameters": {"profile": "quick"}, "input_path": str(REPO_ROOT / "x.ipynb")}
    (executed / "hist" / "hist_3_bounds.ipynb").write_text(json.dumps(nb))
    res = site.build_site(tmp / "out", executed=executed, profile="quick", execute_missing=False)
    return tmp / "out", res


def test_build_site_renders_the_executed_notebook_and_names_the_command_for_each_other(built):
    out, res = built
    stems = sorted(p.stem for p in (REPO_ROOT / "notebooks").glob("*/*.ipynb"))
    assert sorted(res["pages"]) == stems and res["pages"]["hist_3_bounds"] == "ok"
    for stem in stems:
        if stem != "hist_3_bounds":
            assert res["pages"][stem] == (f"{stem}: not executed (`./run_all.sh --profile quick --only {stem}`)")
    assert Path(res["html"]) == out / "html" / "index.html" and Path(res["html"]).is_file()
    assert (out / "html" / "hist" / "hist_3_bounds.html").is_file()
    assert not (out / "html" / "hist" / "hist_1_experiments.html").exists()
    assert site.remote_scripts(out / "html") == {}
    assert set(res["times"]) == {"prepare", "execute", "sphinx"} and res["times"]["execute"] == 0


def test_build_site_pages_hold_the_readmes_tables_and_the_missing_notebooks(built):
    out, _ = built
    landing = (out / "src" / "index.md").read_text()
    assert "<!--" not in landing and "| paper" in landing.lower()                # the glance table, no markers
    assert "\nhist/index\ndtfl/index\nhasfl/index\n```" in landing.split("```{toctree}", 1)[1]
    hist = (out / "src" / "hist" / "index.md").read_text()
    assert hist.index("## Results at a glance") < hist.index("## The paper")
    assert "[`hist_3_bounds`](hist_3_bounds.ipynb)" in hist                      # the rendered notebook: a link
    assert "[`hist_1_experiments`]" not in hist and "`hist_1_experiments`" in hist   # the others: text
    assert "- `hist_1_experiments`: not executed (`./run_all.sh --profile quick --only hist_1_experiments`)" in hist
    assert "- `hist_2_figures`: not executed" in hist
    toc = hist[hist.index("```{toctree}"):]
    assert "readme" in toc and "hist_3_bounds" in toc and "hist_1_experiments" not in toc
    assert "Notebooks of the `quick` profile." in hist
    assert "`fedlib/lab/verdicts.py`" in hist and "](../../fedlib" not in hist    # a link out of the site: text
    # the site's copy of the notebook: the lead first, papermill's paths gone, the committed notebook untouched
    page = json.loads((out / "src" / "hist" / "hist_3_bounds.ipynb").read_text())
    assert any(c.get("metadata", {}).get(site.LEAD_TAG) for c in page["cells"])
    assert "input_path" not in page["metadata"]["papermill"]
    assert str(REPO_ROOT) not in json.dumps(page)
    # a second build into the same folder replaces it (an earlier build is no user folder)
    assert site.check_out(out) == out.resolve()


def test_drop_verdict_block_keeps_the_heading_and_the_prose():
    """The site's copy loses the generated committed-verdict block (the lead and this run's output show verdicts);
    the heading and the prose after the block stay, and a cell without a block is untouched."""
    from fedlib.lab.site_pages import drop_verdict_block

    nb = {"cells": [
        {"cell_type": "markdown", "source": ["## Verdict\n", "\n", "<!-- verdict:begin -->\n", "| claim |\n",
                                             "<!-- verdict:end -->\n", "\n", "The rule, below.\n"]},
        {"cell_type": "markdown", "source": "## Verdict\n\n<!-- verdict:begin -->\nx\n<!-- verdict:end -->"},
        {"cell_type": "markdown", "source": "## Try this\n\n- something"},
        {"cell_type": "code", "source": "print('<!-- verdict:begin -->')", "outputs": []}]}
    drop_verdict_block(nb)
    assert nb["cells"][0]["source"] == "## Verdict\n\nThe rule, below.\n"
    assert nb["cells"][1]["source"] == "## Verdict"
    assert nb["cells"][2]["source"] == "## Try this\n\n- something"
    assert nb["cells"][3]["source"] == "print('<!-- verdict:begin -->')"


@pytest.mark.parametrize("paper", ["hist", "dtfl", "hasfl"])
def test_an_explorer_at_its_blocks_state_shows_the_blocks_table_on_the_site(paper):
    """Run at its committed defaults, an explorer's Verdict cell only points at the generated block above it; the
    site drops that block, so its page shows the block's heading and table there and in the lead instead of a
    pointer at nothing (and not the block's line about the live cell below)."""
    from fedlib.lab.notebook_verdicts import LIVE_LINE
    from fedlib.lab.site_pages import LEAD_TAG, prepare_notebook
    from fedlib.lab.story import AT_BLOCK, VERDICT_BEGIN, VERDICT_END

    nb = json.loads((REPO_ROOT / "notebooks" / paper / f"{paper}_explore.ipynb").read_text())
    cells = nb["cells"]
    at = next(i for i, c in enumerate(cells) if "".join(c["source"]).startswith("## Verdict"))
    block = "".join(cells[at]["source"]).partition(VERDICT_BEGIN)[2].partition(VERDICT_END)[0]
    table = [line for line in block.splitlines() if line.startswith("| ") and "claim" not in line]
    assert len(table) == 1 and "**" in table[0]          # the committed row, its verdict word in bold
    code = next(c for c in cells[at + 1:] if c["cell_type"] == "code")
    code["outputs"] = [{"output_type": "display_data", "metadata": {},
                        "data": {"text/markdown": AT_BLOCK, "text/plain": AT_BLOCK}}]
    page = prepare_notebook(nb)
    shown = json.dumps(page, ensure_ascii=False)
    assert AT_BLOCK not in shown and LIVE_LINE not in shown and VERDICT_BEGIN not in shown
    lead = next(c for c in page["cells"] if c["metadata"].get(LEAD_TAG) is True)
    out = next(c for c in page["cells"] if c.get("outputs") and c["source"] == code["source"])["outputs"][0]
    for md in (lead["source"], out["data"]["text/markdown"]):
        assert table[0] in md and "At this page's defaults" in md


# --- progress of the notebooks a build runs -----------------------------------------------------------------------

def test_a_build_numbers_the_notebooks_it_runs_in_order_and_counts_the_work_left(tmp_path, monkeypatch, capsys):
    """build_site with nothing executed: every notebook is run (the child runner faked: a cache miss, so none is
    rendered; Sphinx faked too). The start lines count 1, 2, ... N in the order they run (paper by paper, as the
    pages are built), each names its last committed run where the committed metrics hold one, and each end line's
    "left to run" is the notebooks not run yet."""
    import subprocess

    from fedlib.lab import progress
    from fedlib.lab.notebooks import list_notebooks
    from fedlib.lab.paths import PAPERS

    def run(args, **kwargs):
        if "fedlib.lab.notebooks" in args:
            return subprocess.CompletedProcess(args, 1, "[FAILED] x CacheMiss: FEDLIB_CACHE_ONLY=1: no stored record\n", "")
        return subprocess.CompletedProcess(args, 0, "", "")          # sphinx-build

    monkeypatch.setattr(site.subprocess, "run", run)
    (tmp_path / "executed").mkdir()
    res = site.build_site(tmp_path / "out", executed=tmp_path / "executed", profile="quick")
    order = [nb for paper in PAPERS for nb in list_notebooks(None) if nb.parent.name == paper]
    n = len(order)
    assert n >= 3 and set(res["pages"]) == {nb.stem for nb in order} and "ok" not in res["pages"].values()
    err = capsys.readouterr().err.splitlines()
    starts = [ln for ln in err if " started (cache-only, quick)" in ln]
    ends = [ln for ln in err if " not rendered (" in ln]
    assert len(starts) == len(ends) == n
    for i, (nb, start, end) in enumerate(zip(order, starts, ends), 1):
        label = f"[{i}/{n}] {nb.parent.name}/{nb.stem}"
        assert start.startswith(f"{label} started (cache-only, quick)"), (i, start)
        assert end.startswith(f"{label} not rendered (") and end.endswith(f"; {n - i} left to run)"), (i, end)
        last = progress.last_wall_s(nb.stem, "quick")
        if last is None:
            assert "last committed run" not in start, start
        else:
            assert f"(cache-only, quick) (last committed run {progress.duration(last)})" in start, start
        assert start.endswith("; the last one") if i == n else f"; {n - i} after it" in start, start
    assert any(progress.last_wall_s(nb.stem, "quick") is not None for nb in order)   # a time is shown somewhere
