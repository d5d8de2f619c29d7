"""The CLI's telemetry promises (DESIGN §3): the demo exports where `OTEL_*` points, a
conversation id spans two runs, and `keygen` makes a receipt key."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from zeroclaw_obs.cli import EXIT_BAD_INPUT, EXIT_OK, main
from zeroclaw_obs.receipts import load_key_file

from .receivers import HttpReceiver, decode


@pytest.fixture
def receiver() -> Iterator[HttpReceiver]:
    server = HttpReceiver()
    yield server
    server.close()


@pytest.fixture(autouse=True)
def _clean_otel_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("OTEL_"):
            monkeypatch.delenv(name)


def roots(path: Path) -> list[dict[str, Any]]:
    """The attributes of every `invoke_agent` span in an OTLP/JSON lines file."""
    found = []
    for line in path.read_text().splitlines():
        for resource in json.loads(line)["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    if span["name"].startswith("invoke_agent"):
                        found.append(
                            {a["key"]: next(iter(a["value"].values())) for a in span["attributes"]}
                        )
    return found


class TestDemoExport:
    def test_the_demo_exports_where_the_environment_points_and_to_its_file(
        self, receiver: HttpReceiver, monkeypatch, tmp_path, capsys
    ):
        """With `OTEL_EXPORTER_OTLP_ENDPOINT` the spans reach the receiver as well as the file,
        and the last lines say both."""
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
        path = tmp_path / "traces.jsonl"

        code = main(["demo", "--otlp-json", str(path)])

        exported = decode(receiver.requests)
        tail = capsys.readouterr().err.strip().splitlines()[-3:]
        assert EXIT_OK == code
        assert ["invoke_agent demo"] == [s["name"] for s in exported if s["parent"] is None]
        in_file = [s for line in path.read_text().splitlines() for s in _spans(line)]
        assert sorted(s["span_id"] for s in exported) == sorted(s["spanId"] for s in in_file)
        kinds = {s["name"].split()[0]: s["attributes"]["openinference.span.kind"] for s in exported}
        assert {
            "invoke_agent": "AGENT",
            "chat": "LLM",
            "execute_tool": "TOOL",
            "await_approval": "GUARDRAIL",
        } == kinds
        assert f"spans: written to {path}" in tail[0]
        assert f"spans: exported over OTLP to {receiver.endpoint}/v1/traces" == tail[1]
        assert tail[2].startswith("open them:")

    def test_without_an_endpoint_the_demo_says_how_to_send_them(self, tmp_path, capsys):
        code = main(["demo", "--otlp-json", str(tmp_path / "t.jsonl")])

        tail = capsys.readouterr().err.strip().splitlines()[-2:]
        assert EXIT_OK == code
        assert tail[0].startswith("spans: written to")
        assert "OTEL_EXPORTER_OTLP_ENDPOINT" in tail[1]


def _spans(line: str) -> list[dict[str, Any]]:
    return [
        span
        for resource in json.loads(line)["resourceSpans"]
        for scope in resource["scopeSpans"]
        for span in scope["spans"]
    ]


class TestConversationId:
    def test_two_runs_share_one_conversation(self, tmp_path):
        """`--conversation-id` names the conversation on both runs' spans, never the turn."""
        scenario = tmp_path / "s.json"
        scenario.write_text(json.dumps({"user": "hi", "responses": [{"text": "hello"}]}))
        found = []
        for n in (1, 2):
            path = tmp_path / f"t{n}.jsonl"
            args = ["run", "--scenario", str(scenario), "--conversation-id", "support-42"]
            assert EXIT_OK == main([*args, "--otlp-json", str(path), "--quiet"])
            found += roots(path)

        assert {("support-42", "support-42")} == {
            (r["gen_ai.conversation.id"], r["session.id"]) for r in found
        }
        assert 2 == len({r["zeroclaw.turn.id"] for r in found})

    def test_without_it_the_conversation_is_the_turn(self, tmp_path):
        scenario = tmp_path / "s.json"
        scenario.write_text(json.dumps({"user": "hi", "responses": [{"text": "hello"}]}))
        path = tmp_path / "t.jsonl"
        assert EXIT_OK == main(["run", "--scenario", str(scenario), "--otlp-json", str(path)])

        (root,) = roots(path)
        assert root["zeroclaw.turn.id"] == root["gen_ai.conversation.id"] == root["session.id"]

    def test_a_malformed_id_is_bad_input(self, tmp_path, capsys):
        scenario = tmp_path / "s.json"
        scenario.write_text(json.dumps({"user": "hi", "responses": [{"text": "hello"}]}))

        code = main(["run", "--scenario", str(scenario), "--conversation-id", "a b"])

        assert EXIT_BAD_INPUT == code
        assert "--conversation-id: must be" in capsys.readouterr().err


class TestKeygen:
    def test_prints_a_key_the_receipt_flag_reads(self, tmp_path, capsys):
        assert EXIT_OK == main(["keygen"])
        key_file = tmp_path / "key.hex"
        key_file.write_text(capsys.readouterr().out)

        assert 32 == len(load_key_file(key_file))

    def test_two_keys_differ(self, capsys):
        main(["keygen"])
        main(["keygen"])
        first, second = capsys.readouterr().out.split()
        assert first != second


class TestMessageCapture:
    def test_the_config_turns_message_content_on(self, tmp_path):
        """`capture_message_content: true` puts redacted messages on `chat` spans; without it
        (and without `SPAN_ONLY`) there are none."""
        secret = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5"
        found = {}
        for capture in (True, False):
            scenario = tmp_path / f"s-{capture}.json"
            scenario.write_text(
                json.dumps(
                    {
                        "user": f"my token is {secret}",
                        "config": {"capture_message_content": capture},
                        "responses": [{"text": "hello"}],
                    }
                )
            )
            path = tmp_path / f"t-{capture}.jsonl"
            main(["run", "--scenario", str(scenario), "--otlp-json", str(path), "--quiet"])
            found[capture] = [
                {a["key"]: next(iter(a["value"].values())) for a in span["attributes"]}
                for line in path.read_text().splitlines()
                for span in _spans(line)
                if span["name"].startswith("chat")
            ]

        (chat,) = found[True]
        sent = json.loads(chat["gen_ai.input.messages"])
        assert "my token is [REDACTED:github_token]" == sent[-1]["content"]
        assert "hello" == json.loads(chat["gen_ai.output.messages"])[0]["content"]
        assert [] == [k for span in found[False] for k in span if k.endswith(".messages")]
