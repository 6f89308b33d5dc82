"""The results site's builder (fedlib.lab.site), function by function: widget outputs stripped, the claim and
verdict lead, the project folder scrubbed from outputs, one line for an expected cache miss, stale executed
copies re-run, no script from another host."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fedlib.lab import site

ROOT = Path(__file__).resolve().parents[1]
WIDGET = {"output_type": "display_data", "metadata": {},
          "data": {"application/vnd.jupyter.widget-view+json": {"model_id": "abc", "version_major": 2,
                                                                 "version_minor": 0},
                   "text/plain": "  0%|          | 0/12 [00:00<?, ?it/s]"}}
STATE = {"application/vnd.jupyter.widget-state+json": {"state": {"abc": {"model_name": "HBoxModel"}},
                                                       "version_major": 2, "version_minor": 0}}
PNG = {"output_type": "display_data", "metadata": {}, "data": {"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"}}


def _md(text, **extra):
    return {"cell_type": "markdown", "metadata": {}, "source": text, **extra}


def _code(src, outputs=(), tags=()):
    return {"cell_type": "code", "metadata": {"tags": list(tags)}, "source": src, "execution_count": 1,
            "outputs": list(outputs)}


def _nb(cells, **meta):
    return {"cells": cells, "metadata": {"kernelspec": {"name": "fedlib"}, **meta}, "nbformat": 4,
            "nbformat_minor": 5}


def _verdict_output(table="| claim | verdict |\n|---|---|\n| speed-up | holds |"):
    return {"output_type": "display_data", "metadata": {},
            "data": {"text/markdown": table + "\n\nRules (`fedlib.lab.verdicts`):\n\n- *speed-up*: at least 2x.",
                     "text/plain": "<Markdown>"}}


def _sectioned():
    return _nb([_md("# Fig. 3: the speed-up\nContext sentence one. Context two."),
                _md("## Claim\n> \"HIST is 2x faster\" (Sec. 5, Fig. 3)"),
                _code("profile = 'quick'", tags=["parameters"]),
                _code("plot()", [PNG]),
                _md("## Verdict"),
                _code("story.verdict_section('hist', 'hist_1', metrics)", [_verdict_output()], ["remove-input"]),
                _md("## Try this\nChange `rounds`.")])


# --- progress bars and widgets ------------------------------------------------------------------------------------

def test_strip_widgets_drops_progress_bars_and_widget_state_and_keeps_the_rest():
    stream = {"output_type": "stream", "name": "stdout", "text": "done\n"}
    nb = _nb([_code("run()", [WIDGET, stream, PNG])], widgets=STATE)
    assert site.strip_widgets(nb) == 1
    assert nb["cells"][0]["outputs"] == [stream, PNG]
    assert "widgets" not in nb["metadata"]
    assert site.strip_widgets(nb) == 0


def test_a_prepared_widget_notebook_builds_into_pages_that_load_no_script_from_another_host(tmp_path):
    """docs/conf.py with the builder's copy of a notebook whose tqdm bars are widgets: no require.js, no
    @jupyter-widgets/html-manager, no MathJax from a CDN; the page still shows the figure."""
    src, html = tmp_path / "src", tmp_path / "html"
    src.mkdir()
    nb = _nb([_md("# A notebook\nWith math $a^2$."), _code("run()", [WIDGET, PNG])], widgets=STATE)
    (src / "index.md").write_text("# Site\n\n```{toctree}\nnb\n```\n")
    (src / "nb.ipynb").write_text(json.dumps(site.prepare_notebook(nb)))
    res = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", "-c", str(site.CONF_DIR), str(src),
                          str(html)], capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert res.returncode == 0, res.stderr[-2000:]
    page = (html / "nb.html").read_text()
    assert site.remote_scripts(html) == {}
    for cdn in ("require.js", "require.min.js", "html-manager", "unpkg", "jsdelivr", "cdnjs", "mathjax@",
                "tex-mml", "widget-state"):
        assert cdn not in page.lower(), cdn
    assert "<img" in page and "a^2" in page


def test_remote_scripts_names_each_page_that_loads_a_script_from_another_host(tmp_path):
    (tmp_path / "a.html").write_text('<script src="_static/doctools.js"></script>')
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.html").write_text('<script defer src="https://cdn.jsdelivr.net/npm/x.js"></script>'
                                             "<script src='//unpkg.com/y.js'></script>")
    assert site.remote_scripts(tmp_path) == {"sub/b.html": ["https://cdn.jsdelivr.net/npm/x.js", "//unpkg.com/y.js"]}


# --- the claim and verdict lead ---------------------------------------------------------------------------------

def test_add_lead_puts_the_claim_and_the_verdict_table_right_after_the_title():
    nb = _sectioned()
    n = len(nb["cells"])
    assert site.add_lead(nb) is True
    cells = nb["cells"]
    assert len(cells) == n + 3
    assert cells[0]["source"] == "# Fig. 3: the speed-up"
    lead = cells[1]["source"]
    assert '"HIST is 2x faster" (Sec. 5, Fig. 3)' in lead and "| speed-up | holds |" in lead
    assert "## " not in lead and "Rules (" not in lead            # no second Claim/Verdict anchor; rules stay below
    assert lead.index("HIST is 2x faster") < lead.index("| speed-up |")
    assert cells[2]["outputs"] == [PNG] and "remove-input" in cells[2]["metadata"]["tags"]   # the headline figure
    assert cells[3]["source"] == "Context sentence one. Context two."
    # the rest as it was, but the Claim section points up instead of repeating the claim
    before = [c["source"] for c in _sectioned()["cells"][1:]]
    after = [c["source"] for c in cells[4:]]
    moved = [i for i, (a, b) in enumerate(zip(before, after)) if a != b]
    assert len(after) == len(before) and len(moved) == 1
    assert after[moved[0]] == "## Claim\n\nAbove, at the top of this page." and before[moved[0]].startswith("## Claim")
    assert site.add_lead(nb) is False and len(nb["cells"]) == n + 3    # once


def test_the_lead_shows_the_committed_verdict_when_given():
    nb = _sectioned()
    assert site.add_lead(nb, committed="| claim | ours |\n|---|---|\n| speed-up | 1.5x - 2.5x **not robust** |")
    lead = nb["cells"][1]["source"]
    assert "every committed seed" in lead and "**not robust**" in lead and "| speed-up | holds |" not in lead


def test_committed_verdicts_reads_the_generated_file_for_its_profile_only():
    rows = site.committed_verdicts("hist", "hist_1_experiments", "quick")
    assert rows.startswith("| claim |") and "HIST beats HFedAvg" in rows and "Theorem 1" not in rows
    assert site.committed_verdicts("hist", "hist_1_experiments", "smoke") is None


def test_fold_plumbing_hides_the_injected_parameters_and_the_setup_line():
    nb = {"cells": [
        {"cell_type": "code", "metadata": {"tags": ["injected-parameters"]}, "source": "profile = 'converged'",
         "outputs": []},
        {"cell_type": "code", "metadata": {"tags": ["remove-input"]}, "source": 'setup_notebook(globals(), "hist")',
         "outputs": [{"output_type": "stream", "name": "stdout", "text": "profile quick: figures -> x\n"},
                     {"output_type": "display_data", "data": {"text/plain": "kept"}}]},
        {"cell_type": "code", "metadata": {}, "source": "print(1)",
         "outputs": [{"output_type": "stream", "name": "stdout", "text": "1\n"}]}],
        "metadata": {"papermill": {"input_path": "/abs/in.ipynb", "output_path": "/abs/out.ipynb", "end_time": "t"}}}
    assert site.fold_plumbing(nb) == 2
    assert "hide-input" in nb["cells"][0]["metadata"]["tags"]
    assert [o["output_type"] for o in nb["cells"][1]["outputs"]] == ["display_data"]
    assert nb["cells"][2]["outputs"][0]["text"] == "1\n"                      # other cells' output untouched
    site.scrub_metadata(nb)
    assert nb["metadata"]["papermill"] == {"end_time": "t"}


def test_add_lead_is_a_no_op_on_a_notebook_without_claim_and_verdict_sections():
    nb = _nb([_md("# Old notebook\nContext."), _code("plot()", [PNG]), _md("## Results\nText.")])
    before = json.dumps(nb)
    assert site.add_lead(nb) is False and json.dumps(nb) == before


def test_add_lead_with_a_claim_but_an_unexecuted_verdict_shows_the_claim_only():
    nb = _sectioned()
    nb["cells"][5]["outputs"] = []
    assert site.add_lead(nb) is True
    assert "HIST is 2x faster" in nb["cells"][1]["source"] and "Verdict" not in nb["cells"][1]["source"]


def test_add_lead_gives_its_cells_their_own_ids():
    nb = _sectioned()
    for i, c in enumerate(nb["cells"]):
        c["id"] = f"cell-{i}"
    site.add_lead(nb)
    ids = [c["id"] for c in nb["cells"]]
    assert len(set(ids)) == len(ids) and ids[0] == "cell-0"


# --- no absolute path of the building machine ---------------------------------------------------------------------

def test_scrub_paths_replaces_the_project_folder_in_every_text_output(tmp_path):
    root = str(tmp_path / "repo")
    outs = [{"output_type": "stream", "name": "stdout", "text": [f"wrote {root}/figures/a.png\n", f"in {root}\n"]},
            {"output_type": "execute_result", "execution_count": 1, "metadata": {},
             "data": {"text/plain": f"PosixPath('{root}/figures/metrics/x.json')",
                      "text/html": f"<a href='{root}/figures/b.png'>b</a>", "image/png": f"{root}"}},
            {"output_type": "error", "ename": "FileNotFoundError", "evalue": f"{root}/data missing",
             "traceback": [f"File {root}/fedlib/lab/store.py, line 3"]}]
    nb = _nb([_code("x", outs), _md(f"Source text {root} is not an output")])
    assert site.scrub_paths(nb, root) == 3
    text = json.dumps(nb["cells"][0]["outputs"])
    assert root + "/" not in text.replace(f'"image/png": "{root}"', "")
    assert nb["cells"][0]["outputs"][0]["text"] == ["wrote figures/a.png\n", "in .\n"]
    assert nb["cells"][0]["outputs"][1]["data"]["text/plain"] == "PosixPath('figures/metrics/x.json')"
    assert nb["cells"][0]["outputs"][1]["data"]["image/png"] == root      # images are data, not text
    assert nb["cells"][0]["outputs"][2]["traceback"] == ["File fedlib/lab/store.py, line 3"]
    assert nb["cells"][1]["source"] == f"Source text {root} is not an output"


def test_prepare_notebook_leaves_the_executed_copy_as_it_was():
    nb = _sectioned()
    nb["cells"][3]["outputs"].append(WIDGET)
    nb["cells"][3]["outputs"].append({"output_type": "stream", "name": "stdout", "text": f"{ROOT}/x"})
    before = json.dumps(nb)
    out = site.prepare_notebook(nb, ROOT)
    assert json.dumps(nb) == before
    assert str(ROOT) not in json.dumps(out) and "widget-view" not in json.dumps(out)
    assert out["cells"][1]["metadata"].get(site.LEAD_TAG)


# --- one line for an expected cache miss ----------------------------------------------------------------------

CACHE_MISS = ("PapermillExecutionError: CacheMiss: FEDLIB_CACHE_ONLY=1: no stored record for 0998.json in "
              "/somewhere/figures/quick/store; config {}")


def test_cache_miss_line_is_one_line_naming_the_command_that_trains_it():
    line = site.cache_miss_line("hist_1_experiments", "hist", "quick", CACHE_MISS)
    assert "\n" not in line and "`./run_all.sh --profile quick --only hist`" in line
    assert line.startswith("hist_1_experiments:") and "/somewhere" not in line
    other = site.cache_miss_line("hist_2_figures", "hist", "quick", 'KeyError: "no stored result for config ..."')
    assert other and "--only hist" in other
    assert site.cache_miss_line("x", "hist", "quick", "PapermillExecutionError: ZeroDivisionError: 1/0") is None


def _child_runner(monkeypatch, stdout: str, stderr: str, partial: bool = False) -> list:
    """subprocess.run as site._execute calls it, faked: the runner's child process fails with this output
    (``partial``: leaving papermill's partial executed copy); returns the calls' argument lists and environments."""
    calls = []

    def run(args, env=None, capture_output=False, text=False):
        calls.append((args, env))
        out = Path(args[args.index("--out") + 1])
        if partial:
            (out / "hist").mkdir(parents=True, exist_ok=True)
            (out / "hist" / "hist_1_experiments.ipynb").write_text("{}")
        assert capture_output and text
        return subprocess.CompletedProcess(args, 1, stdout, stderr)

    monkeypatch.setattr(site.subprocess, "run", run)
    return calls


def test_an_expected_cache_miss_shows_one_line_not_the_runners_and_kernels_noise(monkeypatch, tmp_path, capfd):
    """The runner prints [FAILED] ..., papermill logs, the kernel writes '[IPKernelApp] ERROR | KeyboardInterrupt'
    to its stderr: all captured (the runner is a child process); _execute returns one line, leaves no partial
    executed copy and runs the runner cache-only, never committing, with this process's environment unchanged."""
    calls = _child_runner(monkeypatch, f"[FAILED] hist/hist_1_experiments (7.8 s; 7.8 s since the first) {CACHE_MISS}\n"
                          "kernel stdout\n", "papermill ERROR\n[IPKernelApp] ERROR | KeyboardInterrupt\n", partial=True)
    monkeypatch.setenv("FEDLIB_COMMIT", "1")
    env = dict(os.environ)
    nb = ROOT / "notebooks" / "hist" / "hist_1_experiments.ipynb"
    reason = site._execute("hist", "quick", nb, tmp_path / "executed", tmp_path / "scratch")
    seen = capfd.readouterr()
    assert seen.out == "" and seen.err == "", seen
    assert reason == site.cache_miss_line("hist_1_experiments", "hist", "quick", CACHE_MISS)
    assert not (tmp_path / "executed" / "hist" / "hist_1_experiments.ipynb").exists()
    assert dict(os.environ) == env
    [(args, child_env)] = calls
    assert args[1:] == ["-m", "fedlib.lab.notebooks", "--profile", "quick", "--only", "hist_1_experiments", "--out",
                        str(tmp_path / "executed")]
    assert child_env["FEDLIB_CACHE_ONLY"] == "1" and "FEDLIB_COMMIT" not in child_env
    assert child_env["FEDLIB_FIGURES_DIR"] == str(tmp_path / "scratch" / "quick")


def test_an_unexpected_failure_keeps_the_captured_output_for_the_reader(monkeypatch, tmp_path):
    _child_runner(monkeypatch, "[FAILED] hist/hist_1_experiments (1.0 s; 1.0 s since the first) "
                  "PapermillExecutionError: ZeroDivisionError: division by zero\n",
                  "Traceback: ZeroDivisionError in cell 4\n")
    nb = ROOT / "notebooks" / "hist" / "hist_1_experiments.ipynb"
    reason = site._execute("hist", "quick", nb, tmp_path / "executed", tmp_path / "scratch")
    assert reason.startswith("hist_1_experiments: failed: [FAILED] hist/hist_1_experiments")
    assert "ZeroDivisionError in cell 4" in reason


# --- executed copies: current or re-run -------------------------------------------------------------------------

def test_is_current_accepts_a_finished_run_of_the_committed_cells_only(tmp_path):
    source = _sectioned()
    (tmp_path / "nb.ipynb").write_text(json.dumps(source))
    run = json.loads(json.dumps(source))
    run["cells"].insert(3, _code("profile = 'converged'\n", tags=["injected-parameters"]))
    run["metadata"]["papermill"] = {"end_time": "2025-01-01T00:00:00", "exception": None}
    done = tmp_path / "done.ipynb"
    done.write_text(json.dumps(run))
    assert site.is_current(done, tmp_path / "nb.ipynb")
    run["metadata"]["papermill"]["parameters"] = {"profile": "smoke"}
    done.write_text(json.dumps(run))
    assert site.is_current(done, tmp_path / "nb.ipynb", "smoke")
    assert not site.is_current(done, tmp_path / "nb.ipynb", "converged")         # another profile's run
    source["cells"][1]["source"] = "## Claim\nreworded"
    (tmp_path / "nb.ipynb").write_text(json.dumps(source))
    assert not site.is_current(done, tmp_path / "nb.ipynb")                        # stale
    (tmp_path / "nb.ipynb").write_text(json.dumps(run | {"cells": [c for c in run["cells"] if "injected-parameters"
                                                                   not in c["metadata"].get("tags", [])]}))
    assert site.is_current(done, tmp_path / "nb.ipynb")
    for meta in ({"end_time": None, "exception": None}, {"end_time": "t", "exception": True}):
        run["metadata"]["papermill"] = meta
        done.write_text(json.dumps(run))
        assert not site.is_current(done, tmp_path / "nb.ipynb")                    # interrupted / failed
    assert not site.is_current(tmp_path / "missing.ipynb", tmp_path / "nb.ipynb")


def test_a_run_older_than_the_library_is_stale(tmp_path):
    # the verdicts, tables and figures come from fedlib: a copy executed before an edit of it is re-run
    import os
    source = _sectioned()
    (tmp_path / "nb.ipynb").write_text(json.dumps(source))
    run = json.loads(json.dumps(source))
    run["metadata"]["papermill"] = {"end_time": "2025-01-01T00:00:00", "exception": None}
    done = tmp_path / "done.ipynb"
    done.write_text(json.dumps(run))
    assert site.is_current(done, tmp_path / "nb.ipynb")                 # written now: newer than every module
    os.utime(done, (1_000_000, 1_000_000))                               # 1970: older than fedlib/
    assert not site.is_current(done, tmp_path / "nb.ipynb")


def test_glance_drops_the_generator_markers_and_keeps_the_table():
    md = "<!-- glance:begin -->\n| paper | verdicts |\n|---|---|\n| HIST | 3 hold |\n<!-- glance:end -->\n\nNotes."
    assert site._glance(md) == "| paper | verdicts |\n|---|---|\n| HIST | 3 hold |\n\nNotes."


def test_the_sphinx_configuration_is_the_committed_docs_conf_py():
    conf = ROOT / "docs" / "conf.py"
    assert site.CONF_DIR == conf.parent and conf.is_file()
    assert "CONF =" not in (ROOT / "fedlib" / "lab" / "site.py").read_text()    # no second copy of the conf


def test_site_out_folder_is_refused_unless_new_empty_or_an_earlier_build(tmp_path, capsys):
    from fedlib.lab import site
    for bad in ("", "  "):
        with pytest.raises(ValueError, match="--out must name a folder"):
            site.check_out(bad)
    mine = tmp_path / "mine"
    (mine / "notes").mkdir(parents=True)
    with pytest.raises(ValueError, match="holds notes"):
        site.check_out(mine)
    (tmp_path / "f").write_text("x")
    with pytest.raises(ValueError, match="is a file"):
        site.check_out(tmp_path / "f")
    earlier = tmp_path / "earlier"
    (earlier / "html").mkdir(parents=True)
    (earlier / "src").mkdir()
    assert site.check_out(earlier) == earlier.resolve() and site.check_out(tmp_path / "new") == (tmp_path / "new").resolve()
    with pytest.raises(SystemExit) as e:                  # the command refuses before any work, folder untouched
        site.main(["--out", str(mine)])
    assert e.value.code == 2 and "holds notes" in capsys.readouterr().err and (mine / "notes").is_dir()
    with pytest.raises(SystemExit) as e:
        site.main(["--out", ""])
    assert e.value.code == 2


def test_a_regenerated_verdict_block_keeps_a_run_current(tmp_path):
    # python -m fedlib.lab.tables rewrites the Verdict cell's block when committed metrics change: the run's cells are
    # the same, so its executed copy stays current; prose edited outside the block makes it stale
    source = _sectioned()
    at = next(i for i, c in enumerate(source["cells"]) if "".join(c["source"]).startswith("## Verdict"))
    source["cells"][at]["source"] = "## Verdict\n\n<!-- verdict:begin -->\nold table\n<!-- verdict:end -->\n\nThe rule."
    run = json.loads(json.dumps(source))
    run["metadata"]["papermill"] = {"end_time": "2025-01-01T00:00:00", "exception": None}
    done = tmp_path / "done.ipynb"
    done.write_text(json.dumps(run))
    source["cells"][at]["source"] = "## Verdict\n\n<!-- verdict:begin -->\nnew table\n<!-- verdict:end -->\n\nThe rule."
    (tmp_path / "nb.ipynb").write_text(json.dumps(source))
    assert site.is_current(done, tmp_path / "nb.ipynb")
    source["cells"][at]["source"] = source["cells"][at]["source"].replace("The rule.", "Another rule.")
    (tmp_path / "nb.ipynb").write_text(json.dumps(source))
    assert not site.is_current(done, tmp_path / "nb.ipynb")
