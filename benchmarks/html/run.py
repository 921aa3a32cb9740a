"""Size and render time of the HTML run page of ``examples/transformer.py --steps 20``.

    python benchmarks/html/run.py [--repeats 5] [--steps 20]

Captures the run once (``xlacli compile --html``), times ``xlacli report RUN --format
html`` (a fresh process: start-up included), then loads the page in headless Chromium
``--repeats`` times and reads the browser's own Navigation Timing (navigation start to
the end of the load event) and first contentful paint. Goals: under 2 MB, under 1 s.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.browser import find_browser, headless_browser  # noqa: E402

MODEL = "examples/transformer.py"
TIMING = (
    "(() => { const n = performance.getEntriesByType('navigation')[0];"
    " const p = performance.getEntriesByName('first-contentful-paint')[0];"
    " return [n.loadEventEnd, p ? p.startTime : null]; })()"
)


def xlacli(*args: str) -> float:
    """Run xlacli and return its wall time."""
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "xlacli", *args],
        cwd=REPO,
        check=True,
        capture_output=True,
        env={**os.environ, "PJRT_DEVICE": "CPU"},
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    executable = find_browser()
    if executable is None:
        sys.exit("no Chromium found: apt-get install chromium")
    work = Path(tempfile.mkdtemp(prefix="xlacli-bench-html-"))
    try:
        run = work / "run"
        xlacli("compile", MODEL, "--steps", str(args.steps), "--out", str(run), "--html")
        render_s = statistics.median(
            xlacli("report", str(run), "--format", "html") for _ in range(args.repeats)
        )
        page = run / "report.html"
        loads, paints = [], []
        with headless_browser(executable) as browser:
            browser.open(page)  # warms the browser's caches once
            for _ in range(args.repeats):
                load = browser.open(page)
                assert not load.console_errors and not load.requests, load
                load_ms, paint_ms = browser.evaluate(TIMING)
                loads.append(load_ms / 1000)
                if paint_ms is not None:
                    paints.append(paint_ms / 1000)
        size = page.stat().st_size
        print(f"model: {MODEL}, {args.steps} steps")
        print(f"page size: {size / 1e6:.2f} MB (goal < 2 MB)")
        print(f"xlacli report --format html: {render_s:.2f} s (median of {args.repeats})")
        print(f"browser load event end: {statistics.median(loads) * 1000:.0f} ms (goal < 1 s)")
        if paints:
            print(f"first contentful paint: {statistics.median(paints) * 1000:.0f} ms")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
