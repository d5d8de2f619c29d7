"""Real system processes for tests: find a Debian or npm binary, pick a loopback port, stop one.

The Prometheus server and promtool come from the Debian package `prometheus`, Chromium from
`chromium`, and the MCP reference server from the npm package
`@modelcontextprotocol/server-everything`, all of which `.ci/run` installs. Without a binary a
test is skipped, except in CI (`CI=true`), where it fails.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

_DEBIAN_PACKAGES = {"promtool": "prometheus"}
"""The Debian package of a binary whose package has another name (`.ci/run` installs them)."""


def system_binary(name: str) -> str:
    """The path of `name` (e.g. `prometheus`, `promtool`); skips, or fails in CI, without it."""
    found = shutil.which(name)
    if found is None:
        package = _DEBIAN_PACKAGES.get(name, name)
        reason = f"the `{name}` binary is not installed (apt-get install -y {package})"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true and {reason}")
        pytest.skip(reason)
    return found


NODE_PREFIX = Path(__file__).resolve().parents[1] / ".cache" / "node"
"""Where `.ci/run` installs the npm packages tests start (`npm install --prefix`)."""


def node_binary(name: str, package: str) -> str:
    """An npm package's binary under `NODE_PREFIX`; skips, or fails in CI, without it."""
    found = NODE_PREFIX / "node_modules" / ".bin" / name
    if not found.exists():
        reason = (
            f"`{name}` is not installed "
            f"(npm install --prefix {NODE_PREFIX} {package}; .ci/run does it)"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true and {reason}")
        pytest.skip(reason)
    return str(found)


def alive(pid: int) -> bool:
    """Whether a process with this pid exists (a reaped child does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stop(process: subprocess.Popen | None) -> None:
    """SIGTERM, then SIGKILL after 10 s; nothing for a process that never started or ended."""
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)
