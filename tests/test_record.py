"""Recording (`--record`): a run written as a scenario that replays offline to the same slots."""

from __future__ import annotations

import copy
import json
import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from zeroclaw_obs.cli import main
from zeroclaw_obs.errors import ProviderError, ProviderHTTPError
from zeroclaw_obs.providers.base import ProviderResponse
from zeroclaw_obs.record import TurnRecorder
from zeroclaw_obs.redaction import Redactor
from zeroclaw_obs.replay import Replay, build_replay
from zeroclaw_obs.scenario import load_scenario, parse_scenario
from zeroclaw_obs.tools.base import ToolResult
from zeroclaw_obs.turn.hooks import HookCall

from .builders import call, completion
from .conftest import NoTerminal
from .providers.wire import Reply, WireServer

DEMO = Path(__file__).parents[1] / "zeroclaw_obs" / "scenarios" / "demo.yaml"
GITHUB_TOKEN = "ghp_" + "aB3dE5fG7h" * 3 + "iJ1kL2"
KEY = "sk-proj-" + "Qm7vTz2K" * 6


def slots(events_file: Path) -> dict[str, tuple[str, str]]:
    """Each `tool_result` event by call id: (outcome, output)."""
    events = [json.loads(line) for line in events_file.read_text().splitlines()]
    return {e["id"]: (e["outcome"], e["output"]) for e in events if e["type"] == "tool_result"}


def scenario_file(tmp_path: Path, data: dict) -> Path:
    """`data` written as the scenario file `s.yaml` under `tmp_path`."""
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def tool_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str) -> str:
    """A fresh importable package under `tmp_path` whose `tools.py` is `source`; its name."""
    package = f"rec_{uuid.uuid4().hex[:8]}"
    (tmp_path / package).mkdir()
    (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / package / "tools.py").write_text(textwrap.dedent(source))
    monkeypatch.syspath_prepend(str(tmp_path))
    return package


def record_then_replay(
    tmp_path: Path, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> tuple[Path, tuple[int, str, dict], tuple[int, str, dict]]:
    """Run `argv` recorded, then replay the recording; each run's exit, answer and slots."""
    recording = tmp_path / "recorded.yaml"
    first = tmp_path / "first.jsonl"
    code = main([*argv, "--quiet", f"--record={recording}", f"--events-out={first}"])
    answer = capsys.readouterr().out
    second = tmp_path / "second.jsonl"
    again = main(["run", "--scenario", str(recording), "--quiet", f"--events-out={second}"])
    replayed = capsys.readouterr().out
    return recording, (code, answer, slots(first)), (again, replayed, slots(second))


APPROVALS = {
    "user": "clean up",
    "config": {
        "approval": {
            "auto_approve": ["slow"],
            "answers": ["no", {"replace_with": "pretend it worked"}, "always"],
        },
        "max_tool_iterations": 10,
    },
    "tools": [
        {
            "name": "shell",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
            "responses": [{"default": {"output": "done"}}],
        },
        {
            "name": "slow",
            "parameters": {"type": "object", "properties": {}},
            "responses": [{"default": {"hang": True}}],
        },
    ],
    "responses": [
        {"tool_calls": [{"id": "a", "name": "shell", "arguments": {"command": "rm a"}}]},
        {"tool_calls": [{"id": "b", "name": "shell", "arguments": {"command": "rm b"}}]},
        {"tool_calls": [{"id": "c", "name": "shell", "arguments": {"command": "rm c"}}]},
        {"tool_calls": [{"id": "d", "name": "shell", "arguments": {"command": "rm d"}}]},
        {"tool_calls": [{"id": "e", "name": "slow", "arguments": {}}]},
        {"text": "All done."},
    ],
}


class TestRecordThenReplay:
    def test_the_demo_replays_to_the_same_slots_and_answer(self, tmp_path, capsys):
        """A scripted run recorded and replayed gives equal tool results and final text."""
        argv = ["run", "--scenario", str(DEMO)]
        _, first, second = record_then_replay(tmp_path, argv, capsys)
        assert first == second
        assert 0 == first[0]
        assert 7 == len(first[2])

    def test_a_delegating_run_keeps_its_sub_agents(self, tmp_path, capsys):
        """A sub-agent's answers (here from its own script) join the one recorded script in
        the order they came; the recording keeps each sub-agent without a provider or script
        of its own, and the bundles it names, and replays to the same slots."""
        data = {
            "agent": {"alias": "lead", "bundles": ["all"]},
            "user": "weather?",
            "config": {"approval": {"autonomy": "full"}},
            "tools": [
                {"name": "get_weather", "responses": [{"default": {"output": "4C"}}]},
            ],
            "bundles": {"all": {"tools": ["*"]}, "look": {"tools": ["get_*"]}},
            "agents": {
                "researcher": {
                    "description": "Looks things up",
                    "bundles": ["look"],
                    "risk_profile": "supervised",
                    "responses": [
                        {"tool_calls": [{"id": "s1", "name": "get_weather", "arguments": {}}]},
                        {"text": "Oslo: 4C"},
                    ],
                }
            },
            "responses": [
                {"tool_calls": [call("delegate", "d1", agent="researcher", task="Oslo")]},
                {"text": "4C in Oslo."},
            ],
        }
        path = scenario_file(tmp_path, data)
        recording, first, second = record_then_replay(
            tmp_path, ["run", "--scenario", str(path)], capsys
        )

        assert first == second
        assert {"d1": ("success", "Oslo: 4C")} == first[2]
        recorded = load_scenario(recording)
        (agent,) = recorded.agents.values()
        assert (["look"], "supervised", []) == (agent.bundles, agent.risk_profile, agent.responses)
        assert ["all", "look"] == sorted(recorded.bundles)
        texts = [r.text for r in recorded.responses]
        assert [None, None, "Oslo: 4C", "4C in Oslo."] == texts

    def test_approval_answers_are_recorded_in_order(self, tmp_path, capsys):
        """No, replace, always: recorded as answers; replay gives the same slots."""
        data = copy.deepcopy(APPROVALS)
        data["config"]["tool_timeout_s"] = 0.05
        path = scenario_file(tmp_path, data)
        recording, first, second = record_then_replay(
            tmp_path, ["run", "--scenario", str(path)], capsys
        )
        assert first == second
        expected = {
            "a": ("denied", "Denied by user."),
            "b": ("replaced", "pretend it worked"),
            "c": ("success", "done"),
            "d": ("success", "done"),
            "e": ("error", "Error: tool timed out after 0.05s"),
        }
        assert expected == first[2]
        recorded = load_scenario(recording)
        assert ["no", "replace", "always"] == [
            a if isinstance(a, str) else "replace" for a in recorded.config.approval.answers
        ]
        [slow] = [t for t in recorded.tools if t.name == "slow"]
        assert "tool timed out after 0.05s" == slow.responses[0].error

    def test_a_runtime_denial_is_not_an_answer(self, tmp_path, capsys):
        """Nobody answered: nothing is recorded, and replay denies by policy again."""
        data = copy.deepcopy(APPROVALS)
        data["config"]["approval"]["answers"] = []
        data["responses"] = [data["responses"][0], {"text": "Could not."}]
        path = scenario_file(tmp_path, data)
        recording, first, second = record_then_replay(
            tmp_path, ["run", "--scenario", str(path)], capsys
        )
        assert first == second
        assert "denied" == first[2]["a"][0]
        recorded = load_scenario(recording)
        assert [] == recorded.config.approval.answers
        assert "non_interactive" == recorded.config.approval.mode.value

    def test_payloads_are_redacted_and_still_replay(self, tmp_path, capsys):
        """Secrets in the message, the arguments and the results never reach the file."""
        data = {
            "user": f"use {GITHUB_TOKEN}",
            "config": {"approval": {"auto_approve": ["login"]}},
            "tools": [
                {
                    "name": "login",
                    "parameters": {"type": "object", "properties": {"token": {"type": "string"}}},
                    "responses": [{"default": {"output": f"session {KEY}"}}],
                }
            ],
            "responses": [
                {
                    "tool_calls": [
                        {"id": "l1", "name": "login", "arguments": {"token": GITHUB_TOKEN}}
                    ]
                },
                {"text": f"Logged in with {GITHUB_TOKEN}."},
            ],
        }
        path = scenario_file(tmp_path, data)
        recording, first, second = record_then_replay(
            tmp_path, ["run", "--scenario", str(path)], capsys
        )
        text = recording.read_text()
        assert GITHUB_TOKEN not in text
        assert KEY not in text
        assert first == second
        assert "success" == second[2]["l1"][0]

    def test_mcp_annotations_keep_their_hints_and_lose_secrets(self, tmp_path, capsys):
        """A server's annotations are recorded as the standard hints, the title redacted."""
        annotations = {"title": f"Look up {GITHUB_TOKEN}", "readOnlyHint": True, "x-extra": KEY}
        data = {
            "user": "look",
            "config": {"approval": {"auto_approve_read_only": True}},
            "mcp_servers": [
                {
                    "name": "kb",
                    "tools": [
                        {
                            "name": "lookup",
                            "annotations": annotations,
                            "responses": [{"default": {"output": "found"}}],
                        }
                    ],
                }
            ],
            "responses": [
                {"tool_calls": [{"id": "k1", "name": "kb__lookup", "arguments": {}}]},
                {"text": "done"},
            ],
        }
        path = scenario_file(tmp_path, data)
        recording, first, second = record_then_replay(
            tmp_path, ["run", "--scenario", str(path)], capsys
        )
        (server,) = yaml.safe_load(recording.read_text())["mcp_servers"]
        recorded = server["tools"][0]["annotations"]
        assert {"title": "Look up [REDACTED:github_token]", "readOnlyHint": True} == recorded
        assert first == second

    def test_text_protocol_runs_replay(self, tmp_path, capsys):
        """A text-protocol run (tags in the text) records and replays the same."""
        call = '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>'
        data = {
            "user": "weather?",
            "provider": {"native_tools": False},
            "config": {"approval": {"auto_approve": ["get_weather"]}},
            "tools": [
                {
                    "name": "get_weather",
                    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
                    "responses": [{"when": {"city": "Oslo"}, "output": "4C"}],
                }
            ],
            "responses": [{"text": call}, {"text": "It is 4C."}],
        }
        path = scenario_file(tmp_path, data)
        recording, first, second = record_then_replay(
            tmp_path, ["run", "--scenario", str(path)], capsys
        )
        assert (0, "It is 4C.\n") == first[:2]
        assert list(first[2].values()) == list(second[2].values())
        assert second[:2] == first[:2]
        assert load_scenario(recording).provider.native_tools is False

    @pytest.mark.parametrize("native", [True, False])
    def test_a_secret_argument_matches_its_rule_either_way(self, tmp_path, capsys, native):
        """A token under `token`, native or in a tag, replays to its recorded result."""
        arguments = {"token": GITHUB_TOKEN, "user": "ana"}
        tag = json.dumps({"name": "login", "arguments": arguments})
        reply = (
            {"tool_calls": [{"id": "l1", "name": "login", "arguments": arguments}]}
            if native
            else {"text": f"<tool_call>{tag}</tool_call>"}
        )
        data = {
            "user": "log in",
            "provider": {"native_tools": native},
            "config": {"approval": {"auto_approve": ["login"]}},
            "tools": [{"name": "login", "responses": [{"default": {"output": "welcome"}}]}],
            "responses": [reply, {"text": "Done."}],
        }
        path = scenario_file(tmp_path, data)
        recording, first, second = record_then_replay(
            tmp_path, ["run", "--scenario", str(path)], capsys
        )
        assert GITHUB_TOKEN not in recording.read_text()
        assert [("success", "welcome")] == list(first[2].values()) == list(second[2].values())
        assert first[:2] == second[:2]

    def test_an_unwritable_record_path_is_refused_before_the_turn(self, tmp_path, capsys):
        """`--record` into a missing folder: exit 2 naming the flag, nothing run or written."""
        target = tmp_path / "missing" / "r.yaml"
        assert 2 == main(["run", "--scenario", str(DEMO), f"--record={target}"])
        assert "--record" in capsys.readouterr().err
        assert not target.parent.exists()


PYTHON_TOOL = '''
from zeroclaw_obs.tools import tool

@tool(read_only=True)
def lookup(term: str) -> str:
    """Look a term up."""
    return f"{term}: a real answer"
'''


@pytest.fixture
def wire():
    server = WireServer()
    server.start()
    yield server
    server.stop()


SWITCHING_TOOL = '''
from zeroclaw_obs.tools import tool
from zeroclaw_obs.turn.model_switch import request_model_switch

@tool
def escalate(reason: str) -> str:
    """Continue on the bigger model."""
    request_model_switch("gpt-4.1")
    return "escalated"
'''


def requested_models(logs: Path) -> list[str]:
    lines = [json.loads(line) for line in logs.read_text().splitlines()]
    return [line["model"] for line in lines if line["event"] == "llm_request"]


class TestRecordNarrowingAndSwitches:
    def test_a_narrowed_run_replays_its_narrowing(self, tmp_path, capsys):
        """`--allow-tool` removed `deploy`: the model's call to it read `Tool not available`;
        the recording excludes it, so the replay (with no flag) offers and answers the same."""
        data = {
            "user": "weather, then deploy",
            "config": {"approval": {"autonomy": "full"}},
            "tools": [
                {"name": "get_weather", "responses": [{"default": {"output": "4C"}}]},
                {"name": "deploy", "responses": [{"default": {"output": "deployed"}}]},
            ],
            "responses": [
                {
                    "tool_calls": [
                        {"id": "w", "name": "get_weather", "arguments": {}},
                        {"id": "d", "name": "deploy", "arguments": {}},
                    ]
                },
                {"text": "done"},
            ],
        }
        path = scenario_file(tmp_path, data)
        argv = ["run", "--scenario", str(path), "--allow-tool", "get_*"]
        recording, first, second = record_then_replay(tmp_path, argv, capsys)

        assert first == second
        assert ("excluded", "Tool not available in this turn: deploy") == first[2]["d"]
        assert ["deploy"] == load_scenario(recording).config.excluded_tools

    def test_a_narrowing_that_removes_delegate_is_kept(self, tmp_path, capsys):
        data = {
            "user": "weather",
            "config": {"approval": {"autonomy": "full"}},
            "tools": [{"name": "get_weather", "responses": [{"default": {"output": "4C"}}]}],
            "agents": {"helper": {"description": "Helps"}},
            "responses": [
                {"tool_calls": [call("delegate", "d1", agent="helper", task="x")]},
                {"text": "done"},
            ],
        }
        path = scenario_file(tmp_path, data)
        argv = ["run", "--scenario", str(path), "--allow-tool", "get_weather"]
        recording, first, second = record_then_replay(tmp_path, argv, capsys)

        assert first == second
        assert "excluded" == first[2]["d1"][0]
        assert ["delegate"] == load_scenario(recording).config.excluded_tools

    def test_a_tool_s_model_switch_replays(self, tmp_path, capsys, wire, monkeypatch):
        """A Python tool switched a real run to `gpt-4.1`: the recording keeps the file's
        `provider.models` and the switch on the tool's rule, so the replay asks the same model
        at each iteration and reports the switch."""
        package = tool_package(tmp_path, monkeypatch, SWITCHING_TOOL)
        monkeypatch.setenv("MY_KEY", KEY)
        wire.script(
            Reply.json(completion("", calls=[("call_e", "escalate", {"reason": "hard"})])),
            Reply.json(completion("Reviewed on the bigger model.")),
        )
        agent = {
            "user": "review",
            "config": {"approval": {"auto_approve": ["escalate"]}},
            "provider": {
                "kind": "openai",
                "base_url": f"{wire.url}/v1",
                "model": "gpt-4.1-mini",
                "models": ["gpt-4.1"],
                "api_key_env": "MY_KEY",
                "stream": False,
            },
            "python_tools": [f"{package}.tools:escalate"],
        }
        path = tmp_path / "agent.yaml"
        path.write_text(yaml.safe_dump(agent))
        recording = tmp_path / "recorded.yaml"
        logs = [tmp_path / "first.log", tmp_path / "second.log"]
        code = main(
            [
                "run",
                "--scenario",
                str(path),
                "--quiet",
                f"--record={recording}",
                f"--logs-out={logs[0]}",
            ]
        )
        answer = capsys.readouterr().out
        again = main(["run", "--scenario", str(recording), "--quiet", f"--logs-out={logs[1]}"])
        replayed = capsys.readouterr().out

        assert (0, 0) == (code, again)
        assert answer == replayed
        assert ["gpt-4.1-mini", "gpt-4.1"] == [json.loads(r.body)["model"] for r in wire.requests]
        assert ["gpt-4.1-mini", "gpt-4.1"] == requested_models(logs[0])
        assert requested_models(logs[0]) == requested_models(logs[1])
        recorded = load_scenario(recording)
        assert ["gpt-4.1"] == recorded.provider.models
        (rule,) = recorded.tools[0].responses
        assert ("escalated", "gpt-4.1") == (rule.output, rule.switch_model)
        switched = [json.loads(line)["event"] for line in logs[1].read_text().splitlines()].count(
            "model_switched"
        )
        assert 1 == switched


class TestRecordARealRun:
    def test_a_loopback_run_replays_offline(self, tmp_path, capsys, wire, monkeypatch):
        """A real OpenAI-wire run with a Python tool, recorded, replays with no server."""
        package = tool_package(tmp_path, monkeypatch, PYTHON_TOOL)
        monkeypatch.setenv("MY_KEY", KEY)
        wire.script(
            Reply.json(
                completion(
                    "Looking both up.",
                    calls=[
                        ("call_a", "lookup", {"term": "otel"}),
                        ("call_b", "get_weather", {"city": "Oslo"}),
                    ],
                )
            ),
            Reply.json(completion("otel is tracing; Oslo is 18C.")),
        )
        agent = {
            "user": "explain",
            "config": {"approval": {"auto_approve": ["get_weather", "lookup"]}},
            "provider": {
                "kind": "openai",
                "base_url": f"{wire.url}/v1",
                "model": "gpt-4.1-mini",
                "api_key_env": "MY_KEY",
                "stream": False,
            },
            "python_tools": [f"{package}.tools:lookup"],
            "tools": [
                {
                    "name": "get_weather",
                    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
                    "responses": [{"default": {"output": "18C"}}],
                }
            ],
        }
        path = tmp_path / "agent.yaml"
        path.write_text(yaml.safe_dump(agent))
        recording, first, second = record_then_replay(
            tmp_path, ["run", "--scenario", str(path)], capsys
        )
        assert 2 == len(wire.requests)  # the replay asked the server nothing
        assert first == second
        assert {
            "call_a": ("success", "otel: a real answer"),
            "call_b": ("success", "18C"),
        } == first[2]
        recorded = load_scenario(recording)
        assert ("scripted", "openai", "gpt-4.1-mini") == (
            recorded.provider.kind,
            recorded.provider.name,
            recorded.provider.model,
        )
        assert [] == recorded.python_tools
        first_response = recorded.responses[0]
        assert ("gpt-4.1-mini-2025-04-14", "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT") == (
            first_response.model,
            first_response.response_id,
        )
        assert ["tool_calls"] == first_response.finish_reasons
        assert ["get_weather", "lookup"] == [t.name for t in recorded.tools]
        assert KEY not in recording.read_text()

    def test_a_run_that_ended_on_a_provider_error_replays_to_it(
        self, tmp_path, capsys, wire, monkeypatch
    ):
        """The failure that ended the turn is recorded; replay ends the same way (exit 3)."""
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        body = {"error": {"message": f"quota for {KEY}", "type": "server_error"}}
        wire.script(
            Reply.json(completion(calls=[("call_w", "get_weather", {"city": "Oslo"})])),
            Reply.json(body, status=503),
        )
        agent = {
            "user": "weather?",
            "config": {"approval": {"auto_approve": ["get_weather"]}},
            "provider": {
                "kind": "openai",
                "base_url": f"{wire.url}/v1",
                "model": "m",
                "stream": False,
                "max_retries": 0,
            },
            "tools": [
                {
                    "name": "get_weather",
                    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
                    "responses": [{"default": {"output": "4C"}}],
                }
            ],
        }
        path = tmp_path / "agent.yaml"
        path.write_text(yaml.safe_dump(agent))
        recording, first, second = record_then_replay(
            tmp_path, ["run", "--scenario", str(path)], capsys
        )
        assert 3 == first[0]
        assert "provider 'openai': HTTP 503" in first[1]
        assert first == second
        assert {"call_w": ("success", "4C")} == second[2]
        assert KEY not in recording.read_text()


class TestTurnRecorder:
    def recorder(self) -> tuple[TurnRecorder, Replay]:
        data = {
            "user": "x",
            "tools": [{"name": "t"}],
            "mcp_servers": [{"name": "wx", "tools": [{"name": "forecast"}]}],
            "responses": [{"text": "x"}],
        }
        recorder = TurnRecorder(Redactor())
        replay = build_replay(parse_scenario(data, "s"), terminal=NoTerminal(), recorder=recorder)
        return recorder, replay

    @pytest.mark.parametrize(
        ("result", "rule"),
        [
            (ToolResult.ok("out"), {"output": "out"}),
            (ToolResult.ok("(no output)"), {"output": ""}),
            (ToolResult(False, "", "Error: not found"), {"error": "not found"}),
            (ToolResult(False, "", "Error executing t: boom"), {"raise": "boom"}),
        ],
    )
    def test_each_result_becomes_the_rule_that_makes_it(self, result, rule):
        """Success, `(no output)`, a failed result and a raise each map back to their rule."""
        recorder, _ = self.recorder()
        recorder.record_tool_result(
            HookCall(name="t", arguments={}, call_id="c", turn_id="u"), result
        )
        assert [{"when": {}, **rule}] == recorder.rules["t"]

    def test_a_short_mcp_name_reaches_its_server_tool(self):
        """A call to `forecast` is recorded under `wx__forecast`."""
        recorder, _ = self.recorder()
        call = HookCall(name="forecast", arguments={"d": 1}, call_id="c", turn_id="u")
        recorder.record_tool_result(call, ToolResult.ok("sun"))
        assert [{"when": {"d": 1}, "output": "sun"}] == recorder.rules["wx__forecast"]

    def test_a_retried_failure_is_dropped(self):
        """A failure followed by a response was retried: only a last failure is kept."""
        recorder, replay = self.recorder()
        recorder.record_failure(ProviderHTTPError("p", "http_502", status=502))
        recorder.record_response(ProviderResponse(text="ok"))
        assert [{"text": "ok"}] == replay.recording()["responses"]
        recorder.record_failure(ProviderError("p", "timeout"))
        assert {"error": {"error_type": "timeout"}} == replay.recording()["responses"][-1]

    def test_the_first_result_for_given_arguments_wins(self):
        """Two calls with the same arguments keep one rule (replay's first match)."""
        recorder, _ = self.recorder()
        call = HookCall(name="t", arguments={"a": 1}, call_id="c", turn_id="u")
        recorder.record_tool_result(call, ToolResult.ok("one"))
        recorder.record_tool_result(call, ToolResult.ok("two"))
        assert [{"when": {"a": 1}, "output": "one"}] == recorder.rules["t"]

    async def test_the_recording_is_a_valid_scenario(self):
        """`Replay.recording()` after a turn validates as a scripted scenario."""
        _, replay = self.recorder()
        await replay.run()
        data: dict[str, Any] = replay.recording()
        recorded = parse_scenario(data, "r")
        assert ("scripted", "x") == (recorded.provider.kind, recorded.responses[0].text)
        assert ["wx"] == [server.name for server in recorded.mcp_servers]
