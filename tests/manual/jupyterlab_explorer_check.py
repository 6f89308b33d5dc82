"""Manual check: the HASFL explorer works live in JupyterLab (headless Chromium, driven by Playwright).

What it checks: it opens ``notebooks/hasfl/hasfl_explore.ipynb`` in a running JupyterLab, waits for the ``fedlib``
kernel to be idle, runs all cells (menu Run > Run All Cells), waits for the controls (ipywidgets sliders) and the
decision table ("predicted Θ (s)") below them, reads HASFL's row of that table and the devices table's
"HASFL b_i" column, then types a new value into one slider's readout ("devices N": 20 -> 8 by default) and waits
for the status line "Updated in X s." above the tables. It passes when the devices table then has the new number of
rows and the controls rendered as widgets (no "VBox(children=...)" text, no traceback in any output). Screenshots
before and after the change go to ``--out``; a JSON summary is printed (exit status 0: pass, 1: fail).

It never saves the notebook: it turns JupyterLab's autosave off through the settings API for the run (and puts the
previous setting back at the end) and, at the end, shuts down the kernel session it started through the REST API.
It is not a pytest test (it needs a browser and a live server); run it by hand:

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

       /tmp/labcheck/pw/bin/python tests/manual/jupyterlab_explorer_check.py --out /tmp/labcheck

   Options: ``--url`` (default http://localhost:8899), ``--chromium`` (default /usr/bin/chromium),
   ``--devices`` (the new "devices N", default 8), ``--timeout`` (seconds for the first run, default 300).

Afterwards stop JupyterLab, remove ``notebooks/hasfl/.ipynb_checkpoints`` if it was created, and check that
``git status --short notebooks/`` shows no change to the notebook.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

NOTEBOOK = "notebooks/hasfl/hasfl_explore.ipynb"
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--url", default="http://localhost:8899")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    ap.add_argument("--out", default="/tmp/labcheck")
    ap.add_argument("--devices", type=int, default=8, help='the new value of the "devices N" slider')
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds allowed for the first run of all cells")
    args = ap.parse_args(argv)

    from playwright.sync_api import sync_playwright

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    summary: dict = {"notebook": NOTEBOOK, "pass": False, "checks": {}}
    console: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=args.chromium, headless=True,
                                    args=["--no-sandbox", "--disable-dev-shm-usage"])
        page = browser.new_page(viewport={"width": 1500, "height": 2000})
        page.on("console", lambda m: console.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
        page.on("pageerror", lambda e: console.append(f"pageerror: {e}"))
        old_settings, new_sessions, before_ids = None, [], set()
        try:
            # autosave off for this run (put back in `finally`), so the notebook file is never written
            page.goto(f"{args.url}/lab", wait_until="domcontentloaded")
            page.wait_for_selector("#jp-main-dock-panel", timeout=120_000)
            status, got = api(page, "GET", f"/lab/api/settings/{DOCMANAGER}")
            if status == 200 and got is not None:
                old_settings = got.get("raw", "{}")
                api(page, "PUT", f"/lab/api/settings/{DOCMANAGER}", {"raw": json.dumps({"autosave": False})})
            _, sessions = api(page, "GET", "/api/sessions")
            before_ids = {s["id"] for s in sessions or []}

            t0 = time.time()
            page.goto(f"{args.url}/lab/tree/{NOTEBOOK}", wait_until="domcontentloaded")
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
            page.wait_for_function("() => [...document.querySelectorAll('.jp-OutputArea-output th')]"
                                   ".some(e => e.textContent.trim() === 'predicted Θ (s)')",
                                   timeout=args.timeout * 1000)
            summary["checks"]["first_table_s"] = round(time.time() - t_run, 1)
            time.sleep(1.0)
            wait_idle(page, args.timeout)                      # the sweep and the export cell finish too
            summary["checks"]["run_all_s"] = round(time.time() - t_run, 1)

            slider = page.locator(".widget-slider").filter(
                has=page.locator(".widget-label", has_text=re.compile(r"^devices N$"))).first
            slider.wait_for(state="visible", timeout=30_000)
            n_sliders = page.locator(".jp-OutputArea-output .widget-slider").count()
            text = outputs_text(page)
            summary["checks"]["sliders_rendered"] = n_sliders
            summary["checks"]["raw_widget_text"] = bool(re.search(r"(VBox|HBox|IntSlider)\(", text))
            summary["checks"]["traceback_in_outputs"] = "Traceback" in text or page.locator(
                ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").count() > 0
            summary["checks"]["timeline_figure"] = page.locator(".jp-OutputArea-output img").count()

            before = read_decision(page)
            summary["before"] = before
            readout = slider.locator(".widget-readout")
            summary["devices_N_before"] = readout.text_content().strip()
            slider.scroll_into_view_if_needed()
            page.evaluate("() => { const e = document.querySelector('.jp-OutputArea-output .widget-vbox'); "
                          "if (e) e.scrollIntoView({block: 'start'}); }")
            time.sleep(0.5)
            page.screenshot(path=str(out / "before.png"))

            # type the new value into the readout and press Enter
            readout.click()
            page.keyboard.press("Control+A")
            page.keyboard.type(str(args.devices))
            page.keyboard.press("Enter")
            t_change = time.time()
            page.wait_for_function("() => [...document.querySelectorAll('.jp-OutputArea-output')]"
                                   ".some(e => /Updated in [0-9.]+ s\\./.test(e.textContent))", timeout=120_000)
            page.wait_for_function("""(n) => { for (const t of document.querySelectorAll('.jp-OutputArea-output table')) {
                    if ([...t.querySelectorAll('th')].some(h => h.textContent.trim() === 'HASFL b_i'))
                        return t.querySelectorAll('tbody tr').length === n; } return false; }""",
                                   arg=args.devices, timeout=60_000)
            summary["checks"]["change_seen_after_s"] = round(time.time() - t_change, 2)
            m = re.search(r"Updated in ([0-9.]+) s\.", outputs_text(page))
            summary["updated_in_s"] = float(m.group(1)) if m else None
            summary["devices_N_after"] = readout.text_content().strip()
            after = read_decision(page)
            summary["after"] = after
            err = re.search(r"(Cannot compute this:[^\n]*|Internal error[^\n]*)", outputs_text(page))
            summary["checks"]["error_line"] = err.group(1) if err else ""
            time.sleep(0.5)
            page.evaluate("() => { const e = document.querySelector('.jp-OutputArea-output .widget-vbox'); "
                          "if (e) e.scrollIntoView({block: 'start'}); }")
            time.sleep(0.5)
            page.screenshot(path=str(out / "after.png"))

            c = summary["checks"]
            summary["pass"] = bool(
                n_sliders >= 1 and not c["raw_widget_text"] and not c["traceback_in_outputs"]
                and before["hasfl_row"] and after["hasfl_row"]
                and before["n_devices"] == int(float(summary["devices_N_before"]))
                and after["n_devices"] == args.devices and summary["devices_N_after"] == str(args.devices)
                and summary["updated_in_s"] is not None and not c["error_line"]
                and (after["hasfl_row"] != before["hasfl_row"] or after["b_i"] != before["b_i"]))
        except Exception as err:                               # report what failed, with a screenshot
            summary["error"] = f"{type(err).__name__}: {err}".splitlines()[0][:500]
            try:
                page.screenshot(path=str(out / "failure.png"))
                summary["failure_screenshot"] = str(out / "failure.png")
            except Exception:
                pass
        finally:
            try:
                _, sessions = api(page, "GET", "/api/sessions")
                for s in sessions or []:
                    if s["id"] not in before_ids and s.get("path", "").endswith("hasfl_explore.ipynb"):
                        api(page, "DELETE", f"/api/sessions/{s['id']}")
                        new_sessions.append(s["id"])
                if old_settings is not None:
                    api(page, "PUT", f"/lab/api/settings/{DOCMANAGER}", {"raw": old_settings})
            except Exception as err:
                summary["cleanup_error"] = str(err)[:300]
            browser.close()
    summary["sessions_shut_down"] = len(new_sessions)
    summary["console_errors"] = [m[:300] for m in console if m.startswith(("error", "pageerror"))][:20]
    summary["screenshots"] = [str(out / "before.png"), str(out / "after.png")]
    print(json.dumps(summary, indent=1, ensure_ascii=False))
    return 0 if summary["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
