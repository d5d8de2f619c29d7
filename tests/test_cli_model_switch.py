"""A model switch through the installed `zeroclaw-obs run` (issue 18 item 3): the scripted model
and a real OpenAI-compatible server on loopback, the OTLP/JSON span tree checked."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path
from typing import Any

import yaml

from zeroclaw_obs.observability.traces.otlp_json import read_otlp_json

from .builders import SECRET, completion
from .providers.wire import Reply, WireServer

SCRIPT = Path(sys.executable).parent / "zeroclaw-obs"

TOOLS = '''
from zeroclaw_obs.tools.base import tool
from zeroclaw_obs.turn.model_switch import request_model_switch


@tool
def use_model(model: str) -> str:
    """Continue this turn on another model of the agent's provider."""
    request_model_switch(model)
    return "switching to " + model
'''


def tools_package(tmp_path: Path) -> str:
    """A package on `tmp_path` with the `use_model` tool; its import path."""
    package = f"switch_{uuid.uuid4().hex[:8]}"
    (tmp_path / package).mkdir()
    (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / package / "tools.py").write_text(textwrap.dedent(TOOLS))
    return f"{package}.tools:use_model"


def run_cli(tmp_path: Path, scenario: dict[str, Any], *flags: str) -> subprocess.CompletedProcess:
    path = tmp_path / "agent.yaml"
    path.write_text(yaml.safe_dump(scenario))
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    for name in list(env):
        if name.startswith("OTEL_"):
            del env[name]
    return subprocess.run(
        [str(SCRIPT), "run", "--scenario", str(path), *flags],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )


def tree(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The one `invoke_agent` span and its `chat` children, in time order."""
    spans = read_otlp_json(path)
    (root,) = [s for s in spans if s["name"].startswith("invoke_agent")]
    chats = sorted(
        (s for s in spans if s["name"].startswith("chat")),
        key=lambda s: s["start_time_unix_nano"],
    )
    assert all(s["trace_id"] == root["trace_id"] for s in spans)
    assert all(s["parent_span_id"] == root["span_id"] for s in chats)
    return root, chats


def switch_events(root: dict[str, Any]) -> list[dict[str, Any]]:
    return [e["attributes"] for e in root["events"] if e["name"] == "zeroclaw.model.switch"]


class TestScriptedModel:
    def test_two_chat_spans_of_two_models_under_one_turn(self, tmp_path: Path):
        """A tool switches the turn: exit 0, one `invoke_agent` over a `chat` span per model
        (`gen_ai.request.model` changes), the switch an event on the root and a log line."""
        scenario = {
            "user": "think harder",
            "provider": {"model": "small-model", "models": ["big-model"]},
            "python_tools": [tools_package(tmp_path)],
            "config": {"approval": {"auto_approve": ["use_model"]}},
            "responses": [
                {
                    "tool_calls": [
                        {"id": "c1", "name": "use_model", "arguments": {"model": "big-model"}}
                    ]
                },
                {"text": "Thought harder."},
            ],
        }
        traces, logs = tmp_path / "traces.jsonl", tmp_path / "logs.jsonl"
        done = run_cli(tmp_path, scenario, "--otlp-json", str(traces), "--logs-out", str(logs))
        assert (0, "Thought harder.") == (done.returncode, done.stdout.strip()), done.stderr
        root, chats = tree(traces)
        assert [("chat small-model", "small-model", 1), ("chat big-model", "big-model", 2)] == [
            (
                s["name"],
                s["attributes"]["gen_ai.request.model"],
                s["attributes"]["zeroclaw.iteration"],
            )
            for s in chats
        ]
        assert ("final", 2, "small-model") == (
            root["attributes"]["zeroclaw.turn.outcome"],
            root["attributes"]["zeroclaw.turn.iterations"],
            root["attributes"]["gen_ai.request.model"],
        )
        assert [
            {
                "zeroclaw.model.switch.source": "tool",
                "zeroclaw.iteration": 2,
                "zeroclaw.model.from": "small-model",
                "zeroclaw.model.to": "big-model",
                "zeroclaw.provider.from": "scripted",
                "zeroclaw.provider.to": "scripted",
            }
        ] == switch_events(root)
        lines = [json.loads(line) for line in logs.read_text().splitlines()]
        (switched,) = [line for line in lines if line["event"] == "model_switched"]
        assert (root["trace_id"], root["span_id"], "big-model") == (
            switched["trace_id"],
            switched["span_id"],
            switched["to_model"],
        )

    def test_an_unknown_model_is_the_tool_s_error(self, tmp_path: Path):
        """A model the file does not list: the tool's slot says so, the turn stays on its
        model and ends well; no switch on any surface."""
        scenario = {
            "user": "think harder",
            "provider": {"model": "small-model"},
            "python_tools": [tools_package(tmp_path)],
            "config": {"approval": {"auto_approve": ["use_model"]}},
            "responses": [
                {
                    "tool_calls": [
                        {"id": "c1", "name": "use_model", "arguments": {"model": "gpt-9"}}
                    ]
                },
                {"text": "Stayed."},
            ],
        }
        traces, history = tmp_path / "traces.jsonl", tmp_path / "history.json"
        done = run_cli(
            tmp_path, scenario, "--otlp-json", str(traces), "--history-out", str(history)
        )
        assert 0 == done.returncode, done.stderr
        root, chats = tree(traces)
        assert ["small-model", "small-model"] == [
            s["attributes"]["gen_ai.request.model"] for s in chats
        ]
        assert [] == switch_events(root)
        (result,) = [m["content"] for m in json.loads(history.read_text()) if m["role"] == "tool"]
        assert "Error executing use_model: model switch refused: unknown model" == result


class TestRealProvider:
    def test_each_request_asks_its_model_over_http(
        self, tmp_path: Path, wire: WireServer, monkeypatch
    ):
        """Against a real Chat Completions server: the first request's body asks the file's
        model, the one after the switch the other, on the same key; the spans say the same,
        and the key never leaves."""
        wire.script(
            Reply.json(completion(calls=[("call_1", "use_model", {"model": "gpt-4.1"})])),
            Reply.json(completion("Switched and answered.")),
        )
        scenario = {
            "user": "think harder",
            "provider": {
                "kind": "openai",
                "base_url": f"{wire.url}/v1",
                "model": "gpt-4.1-mini",
                "models": ["gpt-4.1"],
                "api_key_env": "SWITCH_TEST_KEY",
                "stream": False,
            },
            "python_tools": [tools_package(tmp_path)],
            "config": {"approval": {"auto_approve": ["use_model"]}},
        }
        traces = tmp_path / "traces.jsonl"
        monkeypatch.setenv("SWITCH_TEST_KEY", SECRET)
        done = run_cli(tmp_path, scenario, "--otlp-json", str(traces))
        assert (0, "Switched and answered.") == (done.returncode, done.stdout.strip()), done.stderr
        assert ["gpt-4.1-mini", "gpt-4.1"] == [r.json["model"] for r in wire.requests]
        assert [f"Bearer {SECRET}"] * 2 == [r.headers["authorization"] for r in wire.requests]
        assert ["user", "assistant", "tool"] == [
            m["role"] for m in wire.requests[1].json["messages"]
        ]
        root, chats = tree(traces)
        assert ["gpt-4.1-mini", "gpt-4.1"] == [
            s["attributes"]["gen_ai.request.model"] for s in chats
        ]
        assert [("gpt-4.1-mini", "gpt-4.1")] == [
            (e["zeroclaw.model.from"], e["zeroclaw.model.to"]) for e in switch_events(root)
        ]
        assert SECRET not in traces.read_text() + done.stderr + done.stdout
