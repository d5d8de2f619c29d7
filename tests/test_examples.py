"""The documentation's examples load and run, so the docs cannot drift from the code.

- `examples/runtime.toml` loads as a `--config` file, its redaction table builds a redactor,
  and a run takes it;
- `examples/scenario.yaml` runs offline to its final answer;
- `examples/agent.yaml` parses as an agent file and runs, unchanged, through the installed
  `zeroclaw-obs` console script against a real loopback Chat Completions server
  (`tests/providers/wire.py`) with its real stdio MCP server (`mcp-server-time`, found on
  PATH as the file names it);
- every fenced block of `docs/*.md` whose first line starts with `# example:` is a whole
  file: a `yaml` block must load as a scenario or agent file, a `toml` block as a runtime
  config. Fragments stay unmarked.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from zeroclaw_obs.cli import main
from zeroclaw_obs.config import build_redactor, load_config_file
from zeroclaw_obs.observability.traces.otlp_json import read_otlp_json
from zeroclaw_obs.scenario import load_scenario

from .providers.wire import DONE, Reply, WireServer, sse

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
DOCS = ROOT / "docs"
BIN = Path(sys.executable).parent
MARK = "# example:"
"""The first line of a documentation block that is a whole file, tested here."""


def marked_blocks(language: str) -> list[Any]:
    """`pytest.param(text, id="doc.md:line")` for each marked block of that language."""
    found = []
    fence = re.compile(rf"^```{language}\n(.*?)^```", re.MULTILINE | re.DOTALL)
    for doc in sorted(DOCS.glob("*.md")):
        text = doc.read_text(encoding="utf-8")
        for match in fence.finditer(text):
            if match.group(1).startswith(MARK):
                line = text.count("\n", 0, match.start()) + 1
                found.append(pytest.param(match.group(1), id=f"{doc.name}:{line}"))
    return found


class TestDocumentationBlocks:
    def test_the_docs_mark_their_examples(self):
        """The scenario page marks its whole files (a renamed marker would test nothing)."""
        assert len(marked_blocks("yaml")) >= 8
        assert len(marked_blocks("toml")) >= 1

    @pytest.mark.parametrize("text", marked_blocks("yaml"))
    def test_yaml_block_loads_as_a_scenario(self, tmp_path, text):
        path = tmp_path / "block.yaml"
        path.write_text(text, encoding="utf-8")
        load_scenario(path)

    @pytest.mark.parametrize("text", marked_blocks("toml"))
    def test_toml_block_loads_as_a_runtime_config(self, tmp_path, text):
        path = tmp_path / "block.toml"
        path.write_text(text, encoding="utf-8")
        config = load_config_file(path)
        build_redactor(config.redaction, str(path), field="redaction")


class TestRuntimeToml:
    def test_loads_with_its_settings(self):
        """The sample config is read as written, not as defaults."""
        config = load_config_file(EXAMPLES / "runtime.toml")
        assert config.parallel_tools is True
        assert config.approval.auto_approve_read_only is True
        assert ["tool_search", "lookup_office"] == config.approval.auto_approve
        assert ["lookup_office"] == config.loop_ignore_tools

    def test_its_redaction_table_builds_the_redactor(self):
        """The extra rule redacts; the allow pattern keeps a build id."""
        config = load_config_file(EXAMPLES / "runtime.toml")
        redactor = build_redactor(config.redaction, "runtime.toml", field="redaction")
        secret = "acme_tk_" + "Zq8" * 8
        build = "build-" + "0123456789abcdef" * 2 + "01234567"
        assert f"ticket [REDACTED:acme_ticket_secret] {build}" == redactor.redact_text(
            f"ticket {secret} {build}"
        )


class TestScenarioYaml:
    def test_runs_offline_under_the_sample_config(self, tmp_path, capsys):
        """The scripted example runs to its answer, with `--config examples/runtime.toml`."""
        events = tmp_path / "events.jsonl"
        argv = [
            "run",
            "--scenario",
            str(EXAMPLES / "scenario.yaml"),
            "--config",
            str(EXAMPLES / "runtime.toml"),
            "--quiet",
            f"--events-out={events}",
        ]
        assert 0 == main(argv)
        assert capsys.readouterr().out.startswith("The Oslo office is at Karl Johans gate 1")
        results = [
            json.loads(line)
            for line in events.read_text().splitlines()
            if json.loads(line)["type"] == "tool_result"
        ]
        assert ["lookup_office", "lookup_office", "printer_status", "shell"] == [
            r["name"] for r in results
        ]


def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    """One `chat.completion.chunk` event."""
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return sse({"id": "chatcmpl-ex", "object": "chat.completion.chunk", "choices": [choice]})


def streamed(*, calls: Sequence[tuple[str, str, dict[str, Any]]] = (), text: str = "") -> Reply:
    """A streamed Chat Completions answer: tool calls (name, then arguments) or text, the
    finish chunk, usage and `[DONE]`, as Ollama and vLLM send them."""
    chunks = [chunk({"role": "assistant", "content": None if calls else ""})]
    for index, (call_id, name, arguments) in enumerate(calls):
        head = {"index": index, "id": call_id, "type": "function"}
        function = {"name": name, "arguments": ""}
        chunks.append(chunk({"tool_calls": [{**head, "function": function}]}))
        piece = {"index": index, "function": {"arguments": json.dumps(arguments)}}
        chunks.append(chunk({"tool_calls": [piece]}))
    chunks += [chunk({"content": word}) for word in re.findall(r"\S+\s*", text)]
    chunks.append(chunk({}, "tool_calls" if calls else "stop"))
    usage = {"prompt_tokens": 210, "completion_tokens": 24, "total_tokens": 234}
    chunks.append(sse({"id": "chatcmpl-ex", "choices": [], "usage": usage}))
    chunks.append(DONE)
    return Reply.stream(chunks)


def user_environment() -> dict[str, str]:
    """The caller's environment as a user's shell would have it after `pip install`: the
    venv's scripts on PATH, no collector configured, no provider key."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_") and "API_KEY" not in k}
    env["PATH"] = os.pathsep.join([str(BIN), env.get("PATH", "")])
    return env


class TestAgentYaml:
    def test_parses_as_an_agent_file(self):
        """A real OpenAI-compatible provider, a scripted tool and a stdio MCP server."""
        agent = load_scenario(EXAMPLES / "agent.yaml")
        assert ("openai", True, []) == (agent.provider.kind, agent.provider.real, agent.responses)
        assert agent.provider.key_variable == "OPENAI_API_KEY"
        assert agent.provider.key_required is False  # a loopback base_url
        [server] = agent.mcp_servers
        assert ("time", "stdio", "mcp-server-time") == (
            server.name,
            server.transport,
            server.command,
        )

    def test_runs_against_a_loopback_server(self, tmp_path, wire: WireServer):
        """`zeroclaw-obs run --scenario examples/agent.yaml --base-url …/v1 "question"` calls
        the scripted tool and the real MCP server in parallel and answers."""
        wire.script(
            streamed(
                calls=[
                    ("call_office", "lookup_office", {"city": "Oslo"}),
                    ("call_time", "time__get_current_time", {"timezone": "Europe/Oslo"}),
                ]
            ),
            streamed(text="It is 14:05 at the Oslo office (Karl Johans gate 1)."),
        )
        spans = tmp_path / "spans.jsonl"
        done = subprocess.run(
            [
                str(BIN / "zeroclaw-obs"),
                "run",
                "--scenario",
                str(EXAMPLES / "agent.yaml"),
                "--base-url",
                f"{wire.url}/v1",
                "What time is it at the Oslo office?",
                f"--otlp-json={spans}",
            ],
            capture_output=True,
            text=True,
            timeout=90,
            cwd=tmp_path,
            env=user_environment(),
        )
        assert 0 == done.returncode, done.stderr
        assert "It is 14:05 at the Oslo office (Karl Johans gate 1).\n" == done.stdout
        first, second = wire.requests
        assert "/v1/chat/completions" == first.path
        assert ("qwen2.5:7b", True) == (first.json["model"], first.json["stream"])
        assert "authorization" not in first.headers  # loopback, no key variable set
        offered = {tool["function"]["name"] for tool in first.json["tools"]}
        assert {"lookup_office", "time__get_current_time", "time__convert_time"} <= offered
        results = {
            m["tool_call_id"]: m["content"] for m in second.json["messages"] if m["role"] == "tool"
        }
        assert results["call_office"].startswith("Oslo office: Karl Johans gate 1")
        clock = json.loads(results["call_time"])  # the real server's answer
        assert ("Europe/Oslo", True) == (clock["timezone"], "datetime" in clock)
        names = {span["name"] for span in read_otlp_json(spans)}
        assert {
            "invoke_agent office-assistant",
            "chat qwen2.5:7b",
            "execute_tool lookup_office",
            "execute_tool time__get_current_time",
        } <= names
