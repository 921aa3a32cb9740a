"""Headless Chromium driven through the DevTools protocol, for the HTML report tests.

Chromium is started with ``--remote-debugging-pipe``: it reads protocol
messages (JSON, each ended by a NUL byte) on fd 3 and writes on fd 4, so no
websocket client or open port is needed. A page is loaded with console,
log and network events recorded; tests then evaluate JavaScript, click, and
take screenshots.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--remote-debugging-pipe",
)


def find_browser() -> str | None:
    """The path of a Chromium found on this machine, or None."""
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


@dataclass
class PageLoad:
    """What happened while a page loaded."""

    url: str
    console_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)  # every URL but the page's own
    load_time_s: float = 0.0


class Browser:
    """One headless Chromium and one page (a target attached in flat mode)."""

    def __init__(self, executable: str):
        self._profile = tempfile.mkdtemp(prefix="xlacli-chromium-")
        to_browser_read, self._to_browser = os.pipe()
        self._from_browser, from_browser_write = os.pipe()

        def wire_pipes() -> None:  # runs in the child: the pipes become fds 3 and 4
            # Through fds out of the way first: either pipe may be 3 or 4 already.
            reading, writing = os.dup(to_browser_read), os.dup(from_browser_write)
            reading, writing = os.dup2(reading, 100), os.dup2(writing, 101)
            os.dup2(reading, 3)
            os.dup2(writing, 4)

        self._process = subprocess.Popen(
            [executable, *FLAGS, f"--user-data-dir={self._profile}", "about:blank"],
            preexec_fn=wire_pipes,  # safe: the test process starts no threads
            # close_fds would close 3 and 4 after wire_pipes; Python's own fds are
            # not inheritable, so nothing else leaks into the browser.
            close_fds=False,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_browser_read)
        os.close(from_browser_write)
        self._buffer = b""
        self._next_id = 0
        self._events: list[dict[str, Any]] = []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self._session = self.call("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable")

    def close(self) -> None:
        """Stop the browser and remove its profile."""
        with suppress(OSError, RuntimeError):
            self.call("Browser.close")
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        for fd in (self._to_browser, self._from_browser):
            os.close(fd)
        shutil.rmtree(self._profile, ignore_errors=True)

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """A browser-level command; returns its result."""
        return self._command(method, params, session=None)

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        """A command to the page."""
        return self._command(method, params, session=self._session)

    def _command(self, method: str, params: dict[str, Any], session: str | None) -> dict:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read_message(timeout=30)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self._events.append(reply)

    def _read_message(self, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or self._process.poll() is not None:
                raise RuntimeError("the browser stopped answering")
            if not select.select([self._from_browser], [], [], left)[0]:
                continue
            chunk = os.read(self._from_browser, 1 << 16)
            if not chunk:
                raise RuntimeError("the browser closed its pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def open(
        self, path: Path, *, width: int = 1280, height: int = 900, scripts: bool = True
    ) -> PageLoad:
        """Load a file at a window size and record errors and requests until it loaded.

        ``scripts=False`` loads it with JavaScript off (then only ``query`` reads it).
        """
        self.send("Emulation.setScriptExecutionDisabled", value=not scripts)
        self.resize(width, height)
        url = path.resolve().as_uri()
        self._events.clear()
        started = time.perf_counter()
        self.send("Page.navigate", url=url)
        while not any(e.get("method") == "Page.loadEventFired" for e in self._events):
            self._events.append(self._read_message(timeout=30))
        load = PageLoad(url=url, load_time_s=time.perf_counter() - started)
        if scripts:  # let the page's own script run its first frame
            self.evaluate("new Promise(r => requestAnimationFrame(() => setTimeout(r, 50)))")
        else:
            time.sleep(0.2)
            self.send("DOM.enable")
        for event in self._events:
            _record(event, load)
        return load

    def resize(self, width: int, height: int) -> None:
        """The viewport size (a phone is 390 wide)."""
        self.send(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=width < 600,
        )

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (promises awaited)."""
        result = self.send(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def query(self, selector: str) -> list[dict[str, str]]:
        """The attributes of every element matching ``selector``, without running JavaScript."""
        root = self.send("DOM.getDocument", depth=0)["root"]["nodeId"]
        nodes = self.send("DOM.querySelectorAll", nodeId=root, selector=selector)["nodeIds"]
        found = []
        for node in nodes:
            flat = self.send("DOM.getAttributes", nodeId=node)["attributes"]
            found.append(dict(zip(flat[::2], flat[1::2], strict=True)))
        return found

    def outer_html(self, selector: str) -> str:
        """The markup of the first element matching ``selector``, without running JavaScript."""
        root = self.send("DOM.getDocument", depth=0)["root"]["nodeId"]
        node = self.send("DOM.querySelector", nodeId=root, selector=selector)["nodeId"]
        return self.send("DOM.getOuterHTML", nodeId=node)["outerHTML"]

    def click(self, selector: str) -> None:
        """A real mouse click at the centre of the first element matching ``selector``."""
        box = self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
            " e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
            " return [r.x + r.width / 2, r.y + r.height / 2]; })()"
        )
        for kind in ("mousePressed", "mouseReleased"):
            self.send(
                "Input.dispatchMouseEvent",
                type=kind,
                x=box[0],
                y=box[1],
                button="left",
                clickCount=1,
            )

    def press_enter(self, selector: str) -> None:
        """Focus the first element matching ``selector`` and press Enter on the keyboard."""
        self.evaluate(f"document.querySelector({json.dumps(selector)}).focus()")
        for kind in ("keyDown", "keyUp"):
            self.send(
                "Input.dispatchKeyEvent",
                type=kind,
                key="Enter",
                code="Enter",
                windowsVirtualKeyCode=13,
                text="\r" if kind == "keyDown" else "",
            )

    def screenshot(self, path: Path) -> Path:
        """A PNG of the viewport."""
        self.evaluate("window.scrollTo(0, 0)")
        data = self.send("Page.captureScreenshot", format="png")["data"]
        path.write_bytes(base64.b64decode(data))
        return path


def _record(event: dict[str, Any], load: PageLoad) -> None:
    method, params = event.get("method"), event.get("params", {})
    if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
        load.console_errors.append(" ".join(str(a.get("value")) for a in params.get("args", [])))
    elif method == "Runtime.exceptionThrown":
        load.console_errors.append(str(params.get("exceptionDetails", {}).get("text")))
    elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
        load.console_errors.append(params["entry"].get("text", ""))
    elif method == "Network.requestWillBeSent":
        url = params.get("request", {}).get("url", "")
        if url != load.url:
            load.requests.append(url)


@contextmanager
def headless_browser(executable: str) -> Iterator[Browser]:
    """A browser for the duration of a ``with`` block."""
    browser = Browser(executable)
    try:
        yield browser
    finally:
        browser.close()
