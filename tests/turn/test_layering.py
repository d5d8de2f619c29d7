"""Dependencies point one way: the turn engine imports no telemetry library (DESIGN §1)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import zeroclaw_obs.redaction

TELEMETRY = ("opentelemetry", "prometheus_client", "structlog")


def test_turn_engine_imports_no_telemetry_library():
    """Running a turn loads none of OpenTelemetry, prometheus_client or structlog."""
    code = (
        "import sys, asyncio\n"
        "from zeroclaw_obs.turn import run_tool_call_loop\n"
        "from zeroclaw_obs.replay import build_replay\n"
        "from zeroclaw_obs.scenario import parse_scenario\n"
        "s = parse_scenario({'user': 'hi', 'responses': [{'text': 'hello'}]}, 't')\n"
        "asyncio.run(build_replay(s).run())\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {TELEMETRY!r}))\n"
    )
    # Third-party pydantic plugins (logfire, installed by `make bench`) import OpenTelemetry
    # on their own; they are not ours, so they are switched off for this check.
    env = {**os.environ, "PYDANTIC_DISABLE_PLUGINS": "__all__"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env
    )
    assert 0 == done.returncode, done.stderr
    assert "[]" == done.stdout.strip()


def test_redaction_is_a_leaf():
    """No module of the redaction package imports anything else of zeroclaw_obs."""
    package = Path(zeroclaw_obs.redaction.__file__).parent
    offenders = []
    for source in sorted(package.glob("*.py")):
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.ImportFrom) and (
                node.level > 1 or (node.module or "").startswith("zeroclaw_obs")
            ):
                offenders.append(f"{source.name}: {ast.unparse(node)}")
            if isinstance(node, ast.Import) and any(
                alias.name.startswith("zeroclaw_obs") for alias in node.names
            ):
                offenders.append(f"{source.name}: {ast.unparse(node)}")
    assert [] == offenders
