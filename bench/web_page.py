"""Drive the web page in headless Chromium and time each step; save a screenshot and JSON.

The same flow as the browser test (tests/web/page_flow.py): the service runs in
this process with the deterministic fake model of the server tests (so the
figures measure the page and the service, not an LLM); Debian's ``chromium``
(or ``$TABLERAG_CHROMIUM``) enters the token, uploads a CSV of 300 rows, asks
which row holds a value, waits for the answer with its cited cell highlighted,
and reloads. The screenshot is taken once the answer is shown.

    python bench/web_page.py
    python bench/web_page.py --runs 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from dataclasses import asdict
from importlib.metadata import version
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# The flow lives with the browser test; it imports the server tests' fake model.
sys.path[:0] = [str(ROOT / "tests" / "web"), str(ROOT / "bench")]

from _results import add_output_args, result_path, save_json  # noqa: E402

DEFAULT_OUT = ROOT / "bench" / "results" / "web_page.json"
DEFAULT_SCREENSHOT = ROOT / "bench" / "results" / "web_page.png"


def run(runs: int, screenshot: Path) -> dict[str, Any]:
    """``runs`` flows, each with a fresh server and browser page; the last one's screenshot."""
    from page_flow import (
        ASKED_VALUE,
        find_chromium,
        launch,
        page_server,
        run_flow,
        write_squares_csv,
    )
    from playwright.sync_api import sync_playwright

    chromium = find_chromium()
    if chromium is None:
        raise SystemExit("no Chromium: apt-get install chromium (or set TABLERAG_CHROMIUM)")
    flows = []
    with sync_playwright() as playwright:
        started = time.perf_counter()
        browser = launch(playwright, chromium)
        launch_s = time.perf_counter() - started
        try:
            for i in range(runs):
                with tempfile.TemporaryDirectory() as folder:
                    tmp = Path(folder)
                    csv = write_squares_csv(tmp / "squares.csv")
                    with page_server(tmp) as url:
                        page = browser.new_page(viewport={"width": 1400, "height": 900})
                        try:
                            shot = screenshot if i == runs - 1 else None
                            question = f"Which n has value {ASKED_VALUE}?"
                            flows.append(run_flow(page, url, csv, question, tmp, shot))
                        finally:
                            page.close()
        finally:
            browser_version = browser.version
            browser.close()
    steps = flows[0].timings.keys()
    last = asdict(flows[-1])
    return {
        "chromium": browser_version,
        "playwright": version("playwright"),
        "browser_launch_s": round(launch_s, 3),
        "runs": runs,
        "timings_s": {
            step: {
                "p50": round(statistics.median(f.timings[step] for f in flows), 3),
                "max": round(max(f.timings[step] for f in flows), 3),
            }
            for step in steps
        },
        "last_run": {
            k: last[k] for k in ("answer_text", "cited", "cited_after_reload", "run_nodes")
        },
        "checks": {
            "cited_cell_highlighted_and_in_view": all(
                f.cited == [{"row": "199", "column": "n", "text": "200", "in_view": True}]
                for f in flows
            ),
            "thread_kept_after_reload": all(
                f.thread_id in f.threads_listed_after_reload and len(f.messages_after_reload) == 2
                for f in flows
            ),
            "no_script_errors": all(
                not [e for e in f.console_errors if "Failed to load resource" not in e]
                for f in flows
            ),
        },
    }


def main() -> None:
    """Parse arguments, drive the page, print the timings, save JSON and the screenshot."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1, help="flows to time (fresh server each)")
    parser.add_argument(
        "--screenshot",
        type=Path,
        default=None,
        help=f"PNG of the page with the answer (default: {DEFAULT_SCREENSHOT.name} in results/, "
        "or a timestamped name beside it when that file exists)",
    )
    add_output_args(parser, DEFAULT_OUT)
    args = parser.parse_args()
    out = result_path(DEFAULT_OUT, args.out, force=args.force)
    screenshot = result_path(DEFAULT_SCREENSHOT, args.screenshot, force=args.force)
    result: dict[str, Any] = {"load_avg_before": os.getloadavg(), "cpus": os.cpu_count()}
    result.update(run(args.runs, screenshot))
    result["load_avg_after"] = os.getloadavg()
    result["screenshot"] = screenshot.name
    save_json(out, result)
    for step, figures in result["timings_s"].items():
        print(f"{step:>20}: p50 {figures['p50']:.3f} s  max {figures['max']:.3f} s")
    print(f"checks: {result['checks']}")
    print(f"saved {out} and {screenshot}")


if __name__ == "__main__":
    main()
