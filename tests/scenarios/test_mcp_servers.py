"""Real MCP servers declared in the scenario file: connected for the run, closed after it.

A scripted model drives each turn, so the tests are deterministic; the servers are real
processes (`mcp-server-time` from PyPI and the SDK toolbox of `tests/tools/mcp_servers`).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.system import alive
from zeroclaw_obs.cli import main
from zeroclaw_obs.observability.events import ToolOutcome
from zeroclaw_obs.observability.traces.tracing import SpanObserver

TOOLBOX = Path(__file__).parents[1] / "tools" / "mcp_servers" / "toolbox.py"
TIME_SERVER = Path(sys.executable).parent / "mcp-server-time"


def time_turn(**server: Any) -> dict[str, Any]:
    return {
        "user": "what time is it?",
        "config": {"approval": {"mode": "non_interactive", "auto_approve_read_only": True}},
        "mcp_servers": [
            {
                "name": "time",
                "command": str(TIME_SERVER),
                "args": ["--local-timezone", "UTC"],
                **server,
            }
        ],
        "responses": [
            {
                "tool_calls": [
                    {"id": "c1", "name": "time__get_current_time", "arguments": {"timezone": "UTC"}}
                ]
            },
            {"text": "done"},
        ],
    }


def results(replay: Any) -> dict[str, dict[str, Any]]:
    return {e.id: e.data for e in replay.events.events if e.type == "tool_result"}


def tool_results(events: Path) -> dict[str, str]:
    lines = [json.loads(line) for line in events.read_text().splitlines()]
    return {e["id"]: e["output"] for e in lines if e["type"] == "tool_result"}


class TestScenarioServers:
    async def test_a_stdio_server_from_the_file_serves_the_turn(self, run_scenario):
        """`command:` starts the server for the run; its tools are `server__tool`."""
        outcome, replay = await run_scenario(time_turn())
        assert "done" == outcome.text
        assert ToolOutcome.SUCCESS.value == results(replay)["c1"]["outcome"]
        assert '"timezone": "UTC"' in results(replay)["c1"]["output"]

    async def test_a_deferred_server_is_reached_through_tool_search(self, run_scenario):
        """A deferred real server is offered as stubs; `tool_search` activates its tool."""
        data = time_turn(deferred=True)
        data["responses"] = [
            {
                "tool_calls": [
                    {
                        "id": "s1",
                        "name": "tool_search",
                        "arguments": {"query": "select:time__get_current_time"},
                    }
                ]
            },
            *data["responses"],
        ]
        data["config"]["approval"]["auto_approve"] = ["tool_search"]
        _, replay = await run_scenario(data)
        assert ToolOutcome.SUCCESS.value == results(replay)["c1"]["outcome"]

    async def test_the_server_process_is_gone_after_the_run(self, run_scenario):
        """The runtime stops what it started: the toolbox's own pid is dead after the turn."""
        data = {
            "user": "go",
            "mcp_servers": [{"name": "box", "command": sys.executable, "args": [str(TOOLBOX)]}],
            "config": {"approval": {"auto_approve": ["box__pid"]}},
            "responses": [
                {"tool_calls": [{"id": "c1", "name": "box__pid", "arguments": {}}]},
                {"text": "done"},
            ],
        }
        _, replay = await run_scenario(data)
        pid = int(results(replay)["c1"]["output"])
        assert not alive(pid)


class TestProgress:
    async def test_progress_becomes_events_and_span_events(self, run_scenario, tmp_path):
        """`notifications/progress` reach TurnEvent `tool_progress` and the call's span, which
        carries the MCP semantic-convention attributes (DESIGN §3)."""
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        spans = SpanObserver(provider)
        data = {
            "user": "go",
            "mcp_servers": [{"name": "box", "command": sys.executable, "args": [str(TOOLBOX)]}],
            "config": {"approval": {"auto_approve": ["box__slow"]}},
            "responses": [
                {"tool_calls": [{"id": "c1", "name": "box__slow", "arguments": {"steps": 3}}]},
                {"text": "done"},
            ],
        }
        _, replay = await run_scenario(data, observer=spans)
        spans.shutdown()
        progress = [e for e in replay.events.events if e.type == "tool_progress"]
        assert [("c1", "box__slow")] * 3 == [(e.id, e.name) for e in progress]
        assert [1.0, 2.0, 3.0] == [e.data["progress"] for e in progress]
        (tool_span,) = [
            s for s in exporter.get_finished_spans() if s.name == "execute_tool box__slow"
        ]
        assert 3 == len([e for e in tool_span.events if e.name == "zeroclaw.tool.progress"])
        attributes = tool_span.attributes or {}
        assert ("tools/call", "pipe") == (
            attributes["mcp.method.name"],
            attributes["network.transport"],
        )
        assert attributes["mcp.protocol.version"]


class TestSdkSpans:
    def test_the_sdk_s_spans_start_no_orphan_traces(self):
        """Under a global provider the SDK's call span nests in the turn; connecting adds none."""
        program = Path(__file__).parent / "programs" / "mcp_global_provider.py"
        done = subprocess.run(
            [sys.executable, str(program)], capture_output=True, text=True, timeout=120
        )
        assert 0 == done.returncode, done.stderr[-2000:]
        report = json.loads(done.stdout.splitlines()[-1])
        assert (["invoke_agent agent"], 1) == (report["roots"], report["traces"])
        assert "MCP send tools/call pid" in report["names"]


class TestCatalogChanges:
    async def test_a_tool_the_server_adds_is_offered_at_the_next_request(self, run_scenario):
        """`tools/list_changed` re-lists the server before the next request: `box__extra` runs."""
        calls = [
            [{"id": "c1", "name": "box__grow", "arguments": {}}],
            [{"id": "c2", "name": "box__extra", "arguments": {}}],
        ]
        data = {
            "user": "go",
            "mcp_servers": [{"name": "box", "command": sys.executable, "args": [str(TOOLBOX)]}],
            "config": {"approval": {"auto_approve": ["box__grow", "box__extra"]}},
            "responses": [*({"tool_calls": c} for c in calls), {"text": "done"}],
        }
        _, replay = await run_scenario(data)
        assert ("grown", "extra") == (
            results(replay)["c1"]["output"],
            results(replay)["c2"]["output"],
        )
        offered = [t.name for t in replay.provider.requests[1].tools]
        assert "box__extra" in offered
        assert "box__extra" not in [t.name for t in replay.provider.requests[0].tools]


class TestCommandLine:
    def test_metrics_label_live_tools_by_full_name_and_invented_ones_unknown(
        self, tmp_path, capsys
    ):
        """`tool` labels are bounded to the live catalog: `time__…` by name, a guess `unknown`."""
        data = time_turn()
        data["responses"][0]["tool_calls"].append(
            {"id": "c2", "name": "time__set_clock", "arguments": {}}
        )
        path = tmp_path / "agent.yaml"
        path.write_text(yaml.safe_dump(data))
        metrics = tmp_path / "metrics.txt"
        assert 0 == main(["run", "--scenario", str(path), f"--metrics-out={metrics}", "--quiet"])
        capsys.readouterr()
        text = metrics.read_text()
        assert 'zeroclaw_tool_calls_total{outcome="success",tool="time__get_current_time"}' in text
        assert 'zeroclaw_tool_calls_total{outcome="unknown",tool="unknown"}' in text
        assert "set_clock" not in text

    def test_a_server_s_stderr_reaches_the_log_file_redacted(self, tmp_path, capsys):
        """Each stderr line of a stdio server is a `zeroclaw_obs.mcp` log line, redacted."""
        token = "ghp_" + "Zx9Qw8Er7T" * 3 + "y6Ui5O"
        data = {
            "user": "go",
            "mcp_servers": [{"name": "box", "command": sys.executable, "args": [str(TOOLBOX)]}],
            "config": {"approval": {"auto_approve": ["box__shout"]}},
            "responses": [
                {
                    "tool_calls": [
                        {"id": "c1", "name": "box__shout", "arguments": {"text": f"key {token}"}}
                    ]
                },
                {"text": "done"},
            ],
        }
        path = tmp_path / "agent.yaml"
        path.write_text(yaml.safe_dump(data))
        logs = tmp_path / "logs.jsonl"
        assert 0 == main(["run", "--scenario", str(path), f"--logs-out={logs}", "--quiet"])
        capsys.readouterr()
        lines = [json.loads(line) for line in logs.read_text().splitlines()]
        mcp = [line for line in lines if line.get("logger") == "zeroclaw_obs.mcp"]
        assert any("key [REDACTED:github_token]" in json.dumps(line) for line in mcp)
        assert token not in logs.read_text()

    def test_a_recorded_real_server_replays_offline(self, tmp_path, capsys):
        """`--record` keeps a real server's results as a scripted MCP server: same slots offline."""
        path = tmp_path / "agent.yaml"
        path.write_text(yaml.safe_dump(time_turn()))
        recording, first, second = tmp_path / "rec.yaml", tmp_path / "1.jsonl", tmp_path / "2.jsonl"
        assert 0 == main(
            ["run", "--scenario", str(path), f"--record={recording}", f"--events-out={first}"]
        )
        (server,) = yaml.safe_load(recording.read_text())["mcp_servers"]
        assert ("time", None) == (server["name"], server.get("command"))
        assert 0 == main(["run", "--scenario", str(recording), f"--events-out={second}"])
        capsys.readouterr()
        assert tool_results(first) == tool_results(second)
        assert '"timezone": "UTC"' in tool_results(second)["c1"]

    def test_a_server_that_cannot_start_is_one_bad_input_line(self, tmp_path, capsys):
        """Exit 2 naming the entry, never the command; no output file is written."""
        data = time_turn(command=str(tmp_path / "no-such-server-Qx7"))
        path = tmp_path / "agent.yaml"
        path.write_text(yaml.safe_dump(data))
        events = tmp_path / "events.jsonl"
        assert 2 == main(["run", "--scenario", str(path), f"--events-out={events}"])
        (line,) = capsys.readouterr().err.splitlines()
        assert line.startswith(f"zeroclaw-obs: error: {path}: mcp_servers.0: ")
        assert "Qx7" not in line
        assert not events.exists()
