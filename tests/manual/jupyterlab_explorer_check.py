"""Manual check: the explorers (HASFL, DTFL, HIST) work live in JupyterLab (headless Chromium, driven by Playwright).

What it checks, per paper (``--paper hasfl``, the default; ``dtfl``; ``hist``; ``all``: the three in turn): it opens
the paper's ``notebooks/<paper>/<paper>_explore.ipynb`` in a running JupyterLab (in a workspace of its own, so no
earlier tab is restored), waits for the ``fedlib`` kernel to be idle, runs all cells (menu Run > Run All Cells),
waits for the controls (ipywidgets sliders) and the first table of the default state below them, reads that
state, then types a new value into ONE slider's readout and waits for the status line "Updated in X s (computed and displayed; ...)." above the
views and for the table to show the new value:

- ``hasfl``: "devices N" 20 -> 8 (``--devices``): the devices table ("HASFL b_i", "HASFL cut L_i") then has that
  many rows and HASFL's row of the decision table ("predicted Θ (s)") or the b_i changed;
- ``dtfl``: "clients K" 10 -> 6 (``--clients``): the per-client table ("tier", ..., "FedAvg T (s)") then has that
  many rows (clients 0..K-1); the summary line ("DTFL round ... s against FedAvg ... s") and the per-tier table
  (Table 1's setting, M rows) are read too;
- ``hist``: "cells N" 3 -> 5 (``--cells``): the communication table's "HIST / HFedAvg" row then shows 1/N (0.2) in
  its client, edge server and cloud per-round columns (0.333 before).

In each, the Verdict cell's output (``story.verdict_view``) must point at the generated Verdict block above it
before the change (the controls at the page's defaults: "the verdict is that table") or show a verdict word, and
show the claim's table with a verdict word after it (HIST's: 1/N, 0.200); ``<paper>_verdict_after.png`` is a screenshot of it.

Each passes when, besides, the controls rendered as widgets (no "VBox(children=...)" text, no traceback in any
output) and no error line ("Cannot compute this: ...", "Internal error ...") is shown. Screenshots before and after
the change go to ``--out`` as ``<paper>_before.png`` / ``<paper>_after.png``; a JSON summary per paper is printed
(exit status 0: every requested paper passed, 1: any failed).

It never saves a notebook: it turns JupyterLab's autosave off through the settings API for the run (and puts the
previous setting back at the end) and, at the end, shuts down the kernel session it started and deletes its
workspace through the REST API. It is not a pytest test (it needs a browser and a live server); run it by hand:

1. Playwright in a venv of its own (no ``playwright install``: it drives the system's Chromium)::

       python3 -m venv /tmp/labcheck/pw && /tmp/labcheck/pw/bin/pip install playwright

2. JupyterLab from the project's venv, no token, runtime and config outside the repository::

       mkdir -p /tmp/labcheck && cd /work/main && \\
       JUPYTER_RUNTIME_DIR=/tmp/labcheck/rt JUPYTER_CONFIG_DIR=/tmp/labcheck/config \\
       .venv/bin/jupyter lab --allow-root --no-browser --port 8899 --ServerApp.token='' \\
         --ServerApp.password='' --ServerApp.disable_check_xsrf=True --ServerApp.root_dir=/work/main \\
         > /tmp/labcheck/lab.log 2>&1 &

   (``--allow-root`` only when running as root.)

3. The check::

       /tmp/labcheck/pw/bin/python tests/manual/jupyterlab_explorer_check.py --paper all --out /tmp/labcheck

   Options: ``--paper`` (hasfl, dtfl, hist or all; default hasfl), ``--url`` (default http://localhost:8899),
   ``--chromium`` (default /usr/bin/chromium), ``--devices`` (HASFL's new "devices N", default 8), ``--clients``
   (DTFL's new "clients K", default 6), ``--cells`` (HIST's new "cells N", default 5; it must divide the 60 clients
   and the 300 hidden units), ``--timeout`` (seconds for the first run of all cells, default 300).

Afterwards stop JupyterLab, remove the ``notebooks/<paper>/.ipynb_checkpoints`` folders it created, and check that
``git status --short notebooks/`` shows no change to a notebook.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

DOCMANAGER = "@jupyterlab/docmanager-extension:plugin"


# JS: the first rendered HTML table in an output whose header row has the cell ``header``:
# ``{headers: [...], rows: [[...], ...]}`` (cell texts), or null.
TABLE_JS = """(header) => {
        for (const t of document.querySelectorAll('.jp-OutputArea-output table')) {
            const hs = [...t.querySelectorAll('thead th, tr:first-child th')].map(e => e.textContent.trim());
            if (!hs.some(h => h === header)) continue;
            const rows = [...t.querySelectorAll('tbody tr')].map(
                r => [...r.querySelectorAll('td')].map(e => e.textContent.trim()));
            return {headers: hs, rows: rows};
        }
        return null;
    }"""

# JS: true once the first table with the header cell ``a.header`` has ``a.n`` body rows.
ROWS_JS = """(a) => { for (const t of document.querySelectorAll('.jp-OutputArea-output table')) {
        if ([...t.querySelectorAll('th')].some(h => h.textContent.trim() === a.header))
            return t.querySelectorAll('tbody tr').length === a.n; } return false; }"""

# JS: true once the first table with the header cell ``a.header`` has a row whose first cell is ``a.row`` and whose
# cell ``a.col`` reads ``a.text``.
CELL_JS = """(a) => { for (const t of document.querySelectorAll('.jp-OutputArea-output table')) {
        if (![...t.querySelectorAll('th')].some(h => h.textContent.trim() === a.header)) continue;
        for (const r of t.querySelectorAll('tbody tr')) {
            const c = [...r.querySelectorAll('td')].map(e => e.textContent.trim());
            if (c[0] === a.row) return c[a.col] === a.text; }
        return false; } return false; }"""


def read_decision(page) -> dict:
    """HASFL's row of the summary table and the devices table's b_i and L_i columns, as shown."""
    summary = page.evaluate(TABLE_JS, "predicted Θ (s)")
    devices = page.evaluate(TABLE_JS, "HASFL b_i")
    out = {"summary_headers": None, "hasfl_row": None, "benchmark_theta": {}, "b_i": None, "cuts": None, "n_devices": None}
    if summary:
        out["summary_headers"] = summary["headers"]
        for row in summary["rows"]:
            if row and row[0] == "HASFL":
                out["hasfl_row"] = row
            elif row:
                out["benchmark_theta"][row[0]] = row[1]
    if devices:
        hs = devices["headers"]
        ib, ic = hs.index("HASFL b_i"), hs.index("HASFL cut L_i")
        out["b_i"] = [r[ib] for r in devices["rows"]]
        out["cuts"] = [r[ic] for r in devices["rows"]]
        out["n_devices"] = len(devices["rows"])
    return out


def read_dtfl(page) -> dict:
    """DTFL's summary line, the per-client table (tiers, T) and the per-tier table (Table 1's setting), as shown."""
    clients = page.evaluate(TABLE_JS, "FedAvg T (s)")
    per_tier = page.evaluate(TABLE_JS, "round, max_k T_k (s)")
    line = page.evaluate("() => { for (const e of document.querySelectorAll('.jp-OutputArea-output p'))"
                         " if (e.textContent.trim().startsWith('DTFL round')) return e.textContent.trim();"
                         " return null; }")
    out = {"summary_line": line, "client_headers": None, "n_clients": None, "tiers": None, "T": None,
           "fedavg_T": None, "n_tiers": None, "best_tier": None}
    if clients:
        hs = clients["headers"]
        out["client_headers"] = hs
        it, iT, iF = hs.index("tier"), hs.index("T, eq. 5 (s)"), hs.index("FedAvg T (s)")
        out["tiers"] = [r[it] for r in clients["rows"]]
        out["T"] = [r[iT] for r in clients["rows"]]
        out["fedavg_T"] = [r[iF] for r in clients["rows"]]
        out["n_clients"] = len(clients["rows"])
    if per_tier:
        out["n_tiers"] = len(per_tier["rows"])
        out["best_tier"] = next((r[0] for r in per_tier["rows"] if r and r[-1] == "best"), None)
    return out


def read_hist(page) -> dict:
    """HIST's communication table: each row by its method, and the "HIST / HFedAvg" ratio row, as shown."""
    table = page.evaluate(TABLE_JS, "client / round (L0)")
    out = {"headers": None, "rows": {}, "ratio_row": None}
    if table:
        out["headers"] = table["headers"]
        out["rows"] = {r[0]: r[1:] for r in table["rows"] if r}
        out["ratio_row"] = out["rows"].get("HIST / HFedAvg")
    return out


AT_BLOCK = "the verdict is that table"     # the Verdict cell at the state of the block above it (story.AT_BLOCK)


def read_verdict(page) -> str | None:
    """The Verdict cell's output (the claim's "ours" cell, e.g. "0.333 holds"), as shown; ``AT_BLOCK`` when it
    points at the generated block above it (the controls at the page's defaults); None when absent."""
    table = page.evaluate(TABLE_JS, "claim")
    if not table or not table["rows"]:
        shown = outputs_text(page)
        return AT_BLOCK if AT_BLOCK in shown else None
    return table["rows"][0][table["headers"].index("ours")]


def judge_hasfl(before: dict, after: dict, n_before: str, n_after: str, new: int) -> bool:
    return bool(before["hasfl_row"] and after["hasfl_row"]
                and before["n_devices"] == int(float(n_before))
                and after["n_devices"] == new and n_after == str(new)
                and (after["hasfl_row"] != before["hasfl_row"] or after["b_i"] != before["b_i"]))


def judge_dtfl(before: dict, after: dict, n_before: str, n_after: str, new: int) -> bool:
    return bool(before["summary_line"] and after["summary_line"] and before["n_tiers"] and after["n_tiers"]
                and before["n_clients"] == int(float(n_before)) and before["n_clients"] != new
                and after["n_clients"] == new and n_after == str(new) and len(after["tiers"]) == new)


def hist_ratio(n) -> str:
    """1/N as the table shows it (3 significant digits)."""
    return format(1 / int(float(n)), ".3g")


def judge_hist(before: dict, after: dict, n_before: str, n_after: str, new: int) -> bool:
    b, a = before["ratio_row"], after["ratio_row"]       # client, edge, cloud per round first
    return bool(b and a and n_after == str(new) and b[:3] == [hist_ratio(n_before)] * 3
                and a[:3] == [hist_ratio(new)] * 3 and a != b)


def verdict_follows(name: str, before: str | None, after: str | None, new: int) -> bool:
    """The Verdict cell points at the block above (the defaults) or shows a verdict word before the change, and a
    verdict word after it; HIST's follows N (1/N, 3 digits)."""
    words = ("holds", "partly", "fails", "not reached")
    ok = bool(before and after and (before == AT_BLOCK or any(w in before for w in words))
              and any(w in after for w in words))
    return ok and (name != "hist" or after.startswith(f"{1 / new:.3f}"))


@dataclass(frozen=True)
class Paper:
    """What to check in one paper's explorer: its notebook, a header of the first table of the default state, the
    slider moved (its label), how the state is read and judged, and what to wait for after the change."""

    notebook: str
    first_header: str
    slider: str
    read: Callable
    judge: Callable
    wait_js: str
    wait_arg: Callable                                     # the new value -> the argument of wait_js
    value_option: str                                      # the option that sets the new value


PAPERS = {
    "hasfl": Paper("notebooks/hasfl/hasfl_explore.ipynb", "predicted Θ (s)", "devices N", read_decision, judge_hasfl,
                   ROWS_JS, lambda n: {"header": "HASFL b_i", "n": n}, "devices"),
    "dtfl": Paper("notebooks/dtfl/dtfl_explore.ipynb", "FedAvg T (s)", "clients K", read_dtfl, judge_dtfl,
                  ROWS_JS, lambda n: {"header": "FedAvg T (s)", "n": n}, "clients"),
    "hist": Paper("notebooks/hist/hist_explore.ipynb", "client / round (L0)", "cells N", read_hist, judge_hist,
                  CELL_JS, lambda n: {"header": "client / round (L0)", "row": "HIST / HFedAvg", "col": 1,
                                      "text": hist_ratio(n)}, "cells"),
}


def outputs_text(page) -> str:
    return page.evaluate("() => [...document.querySelectorAll('.jp-OutputArea-output')].map(e => e.textContent).join('\\n')")


def wait_idle(page, timeout_s: float) -> None:
    """Wait until the notebook's execution indicator says the kernel is idle."""
    page.wait_for_selector('.jp-NotebookPanel .jp-Notebook-ExecutionIndicator[data-status="idle"]',
                           state="attached", timeout=timeout_s * 1000)


def api(page, method: str, path: str, body=None):
    """A JupyterLab REST call with the page's cookies (and its XSRF token when the server checks it)."""
    xsrf = next((c["value"] for c in page.context.cookies() if c["name"] == "_xsrf"), None)
    headers = {"X-XSRFToken": xsrf} if xsrf else {}
    base = page.url.split("/lab")[0]
    kw = {"headers": headers}
    if body is not None:
        kw["data"] = json.dumps(body)
        headers["Content-Type"] = "application/json"
    resp = page.context.request.fetch(base + path, method=method, **kw)
    return resp.status, (resp.json() if resp.status == 200 and resp.body() else None)


def check(p, name: str, args, out: Path) -> dict:
    """Run one paper's check (module docstring) in a browser of its own; its JSON summary."""
    spec = PAPERS[name]
    new = getattr(args, spec.value_option)
    shots = [out / f"{name}_before.png", out / f"{name}_after.png"]
    summary: dict = {"paper": name, "notebook": spec.notebook, "slider": spec.slider, "pass": False, "checks": {}}
    console: list[str] = []
    workspace = f"labcheck-{name}-{uuid.uuid4().hex[:8]}"     # an empty workspace: no earlier tab comes back
    browser = p.chromium.launch(executable_path=args.chromium, headless=True,
                                args=["--no-sandbox", "--disable-dev-shm-usage"])
    page = browser.new_page(viewport={"width": 1500, "height": 2000})
    page.on("console", lambda m: console.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: console.append(f"pageerror: {e}"))
    old_settings, new_sessions, before_ids = None, [], set()
    try:
        # autosave off for this run (put back in `finally`), so the notebook file is never written
        page.goto(f"{args.url}/lab/workspaces/{workspace}", wait_until="domcontentloaded")
        page.wait_for_selector("#jp-main-dock-panel", timeout=120_000)
        status, got = api(page, "GET", f"/lab/api/settings/{DOCMANAGER}")
        if status == 200 and got is not None:
            old_settings = got.get("raw", "{}")
            api(page, "PUT", f"/lab/api/settings/{DOCMANAGER}", {"raw": json.dumps({"autosave": False})})
        _, sessions = api(page, "GET", "/api/sessions")
        before_ids = {s["id"] for s in sessions or []}

        t0 = time.time()
        page.goto(f"{args.url}/lab/workspaces/{workspace}/tree/{spec.notebook}", wait_until="domcontentloaded")
        page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell", timeout=120_000)
        kernel = page.locator(".jp-NotebookPanel .jp-Toolbar-kernelName").first
        page.wait_for_function("() => { const e = document.querySelector('.jp-NotebookPanel .jp-Toolbar-kernelName');"
                               " return e && /fedlib/.test(e.textContent); }", timeout=120_000)
        summary["kernel"] = kernel.text_content().strip()
        wait_idle(page, 180)
        summary["checks"]["kernel_idle_s"] = round(time.time() - t0, 1)

        # Run > Run All Cells
        page.locator(".jp-NotebookPanel .jp-Notebook").first.click(position={"x": 5, "y": 5})
        page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
        page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
        t_run = time.time()
        page.wait_for_function("(h) => [...document.querySelectorAll('.jp-OutputArea-output th')]"
                               ".some(e => e.textContent.trim() === h)", arg=spec.first_header,
                               timeout=args.timeout * 1000)
        summary["checks"]["first_table_s"] = round(time.time() - t_run, 1)
        time.sleep(1.0)
        wait_idle(page, args.timeout)                      # the actions (sweeps) and the export cell finish too
        summary["checks"]["run_all_s"] = round(time.time() - t_run, 1)

        slider = page.locator(".widget-slider").filter(
            has=page.locator(".widget-label", has_text=re.compile(f"^{re.escape(spec.slider)}$"))).first
        slider.wait_for(state="visible", timeout=30_000)
        n_sliders = page.locator(".jp-OutputArea-output .widget-slider").count()
        text = outputs_text(page)
        summary["checks"]["sliders_rendered"] = n_sliders
        summary["checks"]["controls"] = [t.strip() for t in page.locator(
            ".jp-OutputArea-output .widget-vbox .widget-label").all_text_contents()]
        summary["checks"]["raw_widget_text"] = bool(re.search(r"(VBox|HBox|IntSlider)\(", text))
        summary["checks"]["traceback_in_outputs"] = "Traceback" in text or page.locator(
            ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").count() > 0
        summary["checks"]["figures"] = page.locator(".jp-OutputArea-output img").count()
        if name == "hasfl":
            summary["checks"]["timeline_figure"] = summary["checks"]["figures"]

        before = spec.read(page)
        summary["before"] = before
        summary["verdict_before"] = read_verdict(page)
        readout = slider.locator(".widget-readout")
        summary["value_before"] = readout.text_content().strip()
        slider.scroll_into_view_if_needed()
        page.evaluate("() => { const e = document.querySelector('.jp-OutputArea-output .widget-vbox'); "
                      "if (e) e.scrollIntoView({block: 'start'}); }")
        time.sleep(0.5)
        page.screenshot(path=str(shots[0]))

        # type the new value into the readout and press Enter
        readout.click()
        page.keyboard.press("Control+A")
        page.keyboard.type(str(new))
        page.keyboard.press("Enter")
        t_change = time.time()
        page.wait_for_function("() => [...document.querySelectorAll('.jp-OutputArea-output')]"
                               ".some(e => /Updated in [0-9.]+ s \\(computed and displayed/.test(e.textContent))", timeout=120_000)
        page.wait_for_function(spec.wait_js, arg=spec.wait_arg(new), timeout=60_000)
        summary["checks"]["change_seen_after_s"] = round(time.time() - t_change, 2)
        m = re.search(r"Updated in ([0-9.]+) s \(computed and displayed", outputs_text(page))
        summary["updated_in_s"] = float(m.group(1)) if m else None
        summary["value_after"] = readout.text_content().strip()
        if name == "hasfl":                                # the names this check's summary had before --paper
            summary["devices_N_before"], summary["devices_N_after"] = summary["value_before"], summary["value_after"]
        after = spec.read(page)
        summary["after"] = after
        summary["verdict_after"] = read_verdict(page)
        err = re.search(r"(Cannot compute this:[^\n]*|Internal error[^\n]*)", outputs_text(page))
        summary["checks"]["error_line"] = err.group(1) if err else ""
        time.sleep(0.5)
        page.evaluate("() => { const e = document.querySelector('.jp-OutputArea-output .widget-vbox'); "
                      "if (e) e.scrollIntoView({block: 'start'}); }")
        time.sleep(0.5)
        page.screenshot(path=str(shots[1]))
        page.evaluate("() => { for (const t of document.querySelectorAll('.jp-OutputArea-output table'))"
                      " if ([...t.querySelectorAll('th')].some(h => h.textContent.trim() === 'claim'))"
                      " { t.scrollIntoView({block: 'center'}); return; } }")
        time.sleep(0.5)
        page.screenshot(path=str(out / f"{name}_verdict_after.png"))

        c = summary["checks"]
        summary["pass"] = bool(
            n_sliders >= 1 and not c["raw_widget_text"] and not c["traceback_in_outputs"]
            and summary["updated_in_s"] is not None and not c["error_line"]
            and spec.judge(before, after, summary["value_before"], summary["value_after"], new)
            and verdict_follows(name, summary["verdict_before"], summary["verdict_after"], new))
    except Exception as err:                               # report what failed, with a screenshot
        summary["error"] = f"{type(err).__name__}: {err}".splitlines()[0][:500]
        try:
            page.screenshot(path=str(out / f"{name}_failure.png"))
            summary["failure_screenshot"] = str(out / f"{name}_failure.png")
        except Exception:
            pass
    finally:
        try:
            _, sessions = api(page, "GET", "/api/sessions")
            for s in sessions or []:
                if s["id"] not in before_ids and s.get("path", "").endswith(Path(spec.notebook).name):
                    api(page, "DELETE", f"/api/sessions/{s['id']}")
                    new_sessions.append(s["id"])
            if old_settings is not None:
                api(page, "PUT", f"/lab/api/settings/{DOCMANAGER}", {"raw": old_settings})
        except Exception as err:
            summary["cleanup_error"] = str(err)[:300]
        browser.close()
    summary["sessions_shut_down"] = len(new_sessions)
    summary["console_errors"] = [m[:300] for m in console if m.startswith(("error", "pageerror"))][:20]
    summary["screenshots"] = [str(s) for s in shots]
    return summary


def delete_workspaces(p, url: str) -> None:
    """Delete the workspaces this script made (``labcheck-*``) through the REST API; errors ignored."""
    try:
        req = p.request.new_context()
        got = req.get(f"{url}/lab/api/workspaces")
        ids = got.json().get("workspaces", {}).get("ids", []) if got.ok else []
        for ws in ids:
            if ws.startswith("labcheck-"):
                req.delete(f"{url}/lab/api/workspaces/{ws}")
        req.dispose()
    except Exception:
        pass


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--paper", choices=[*PAPERS, "all"], default="hasfl")
    ap.add_argument("--url", default="http://localhost:8899")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    ap.add_argument("--out", default="/tmp/labcheck")
    ap.add_argument("--devices", type=int, default=8, help='HASFL: the new value of the "devices N" slider')
    ap.add_argument("--clients", type=int, default=6, help='DTFL: the new value of the "clients K" slider')
    ap.add_argument("--cells", type=int, default=5, help='HIST: the new value of the "cells N" slider')
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds allowed for the first run of all cells")
    args = ap.parse_args(argv)

    from playwright.sync_api import sync_playwright

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    papers = list(PAPERS) if args.paper == "all" else [args.paper]
    results = []
    with sync_playwright() as p:
        for name in papers:
            summary = check(p, name, args, out)
            print(json.dumps(summary, indent=1, ensure_ascii=False), flush=True)
            results.append(summary["pass"])
        delete_workspaces(p, args.url)
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
