"""A real `zeroclaw-obs serve` process on a free loopback port, for the server tests.

`serve_process(scenario, *flags)` starts the console script with `--port 0` and a token file,
reads the line that names the bound address, and returns a `Served` handle; the fixture stops
every server it started (SIGTERM, then SIGKILL after 10 s).
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

SCRIPT = Path(sys.executable).parent / "zeroclaw-obs"
TOKEN = "test-token-0123456789abcdef"
_SERVING = re.compile(r"serving on (http://\S+)")


@dataclass
class Served:
    """A running `serve` process."""

    url: str
    """`http://127.0.0.1:PORT`."""
    token: str
    process: subprocess.Popen[str]
    stderr_lines: list[str] = field(default_factory=list)
    """Every stderr line so far (a reader thread keeps collecting them)."""

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def client(self, **kwargs: object) -> httpx.Client:
        """A client on the server's URL, with the token."""
        return httpx.Client(base_url=self.url, headers=self.headers, timeout=30.0, **kwargs)

    def async_client(self, **kwargs: object) -> httpx.AsyncClient:
        """An async client on the server's URL, with the token."""
        return httpx.AsyncClient(base_url=self.url, headers=self.headers, timeout=30.0, **kwargs)

    def stop(self, signum: int = signal.SIGTERM, timeout_s: float = 30.0) -> int:
        """Send `signum` and wait for the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signum)
        return self.process.wait(timeout_s)


ServeFactory = Callable[..., Served]


@pytest.fixture
def serve_process(tmp_path: Path) -> Iterator[ServeFactory]:
    """`serve_process(scenario_path, *flags, token=TOKEN)` → a started `Served`."""
    started: list[Served] = []

    def start(scenario: Path, *flags: str, token: str | None = TOKEN) -> Served:
        args = [str(SCRIPT), "serve", "--scenario", str(scenario), "--port", "0", *flags]
        if token is not None:
            token_file = tmp_path / f"token-{len(started)}"
            token_file.write_text(token + "\n")
            args += ["--token-file", str(token_file)]
        process = subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        served = Served(url="", token=token or "", process=process)
        started.append(served)
        found = threading.Event()

        def read() -> None:
            assert process.stderr is not None
            for line in process.stderr:
                served.stderr_lines.append(line.rstrip("\n"))
                match = _SERVING.search(line)
                if match and not found.is_set():
                    served.url = match.group(1)
                    found.set()
            found.set()

        threading.Thread(target=read, daemon=True).start()
        if not found.wait(60) or not served.url:
            process.kill()
            raise AssertionError("serve did not start: " + " | ".join(served.stderr_lines))
        return served

    yield start
    for served in started:
        if served.process.poll() is None:
            served.process.send_signal(signal.SIGTERM)
            try:
                served.process.wait(10)
            except subprocess.TimeoutExpired:
                served.process.kill()
                served.process.wait()
