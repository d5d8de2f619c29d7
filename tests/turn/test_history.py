"""Tests for `zeroclaw_obs.turn.history`: the provider-visible history of a turn (LIFECYCLE §7)."""

from __future__ import annotations

import json
from typing import Any

from zeroclaw_obs.observability.events import ToolOutcome
from zeroclaw_obs.redaction import Redactor
from zeroclaw_obs.turn.history import (
    INTERRUPTED_BY_USER,
    STREAM_INTERRUPTED,
    append_final,
    append_interrupted,
    append_round,
    append_user,
)
from zeroclaw_obs.turn.parse import ParsedToolCall, ParseResult
from zeroclaw_obs.turn.results import Slot

AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
OPENAI_KEY = "sk-proj-AbCdEf0123456789GhIjKlMnOp"
WEATHER = {
    "name": "get_weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    "responses": [
        {"when": {"city": "Paris"}, "output": "18C"},
        {"default": {"output": "4C"}},
    ],
}
LEAKY = {
    "name": "read_env",
    "parameters": {"type": "object", "properties": {"key": {"type": "string"}}},
    "responses": [{"default": {"output": f"AWS_ACCESS_KEY_ID={AWS_KEY}"}}],
}
AUTO = {"auto_approve": ["*"]}
SECRET = "ghp_" + "Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lm9Nb8"


def slot(index: int, call: ParsedToolCall, text: str, **changes: Any) -> Slot:
    closed = Slot(index=index, call_id=call.call_id, name=call.name, arguments=call.arguments)
    closed.fill(ToolOutcome.SUCCESS, text, success=True)
    closed.model_text = text
    for key, value in changes.items():
        setattr(closed, key, value)
    return closed


class TestAppendUser:
    def test_appends_a_user_message(self):
        """A user message is appended as `{"role": "user", "content": text}`."""
        messages: list[dict[str, Any]] = [{"role": "system", "content": "s"}]
        append_user(messages, "hi")
        assert [{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}] == messages


class TestAppendFinal:
    def test_appends_an_assistant_message(self):
        """The final answer is appended as a plain assistant message."""
        messages: list[dict[str, Any]] = []
        append_final(messages, "done")
        assert [{"role": "assistant", "content": "done"}] == messages


class TestAppendInterrupted:
    def test_partial_then_a_blank_line_then_the_marker(self):
        """A cut answer reads `{partial}\\n\\n{marker}`, as an assistant message."""
        messages: list[dict] = []
        append_interrupted(messages, "It is 18", STREAM_INTERRUPTED)
        append_interrupted(messages, "Let me", INTERRUPTED_BY_USER)
        assert [
            {"role": "assistant", "content": "It is 18\n\n[stream interrupted]"},
            {"role": "assistant", "content": "Let me\n\n[interrupted by user]"},
        ] == messages

    def test_the_redactor_sees_the_partial_not_the_marker(self):
        """With a redactor the partial is redacted; the marker is ours and stays as it is."""
        messages: list[dict] = []
        append_interrupted(messages, f"token {SECRET}", STREAM_INTERRUPTED, redactor=Redactor())
        assert "token [REDACTED:github_token]\n\n[stream interrupted]" == messages[0]["content"]


class TestAppendRound:
    def test_native_shape(self):
        """Native: one assistant message with `tool_calls`, then one `tool` message per call id."""
        calls = [
            ParsedToolCall("get_weather", {"city": "Paris"}, "c1"),
            ParsedToolCall("shell", {"command": "ls"}, "c2"),
        ]
        messages: list[dict[str, Any]] = []
        append_round(
            messages,
            ParseResult(calls=calls, text="", native=True),
            [slot(0, calls[0], "18C"), slot(1, calls[1], "Denied by user.")],
            redactor=None,
        )
        assert [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                    },
                    {
                        "id": "c2",
                        "type": "function",
                        "function": {"name": "shell", "arguments": '{"command": "ls"}'},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "18C"},
            {"role": "tool", "tool_call_id": "c2", "content": "Denied by user."},
        ] == messages

    def test_native_prose_is_the_content(self):
        """Text the model wrote beside native calls is the assistant message's content."""
        call = ParsedToolCall("shell", {}, "c1")
        messages: list[dict[str, Any]] = []
        append_round(
            messages,
            ParseResult(calls=[call], text="Let me look.", native=True),
            [slot(0, call, "ok")],
            redactor=None,
        )
        assert "Let me look." == messages[0]["content"]

    def test_text_protocol_shape(self):
        """Text protocol: the raw assistant text, then one `[Tool results]` user message."""
        calls = [
            ParsedToolCall("get_weather", {"city": "Paris"}, "c1"),
            ParsedToolCall("get_weather", {"city": "Oslo"}, "c2"),
        ]
        raw = "Checking.\n<tool_call>…</tool_call><tool_call>…</tool_call>"
        messages: list[dict[str, Any]] = []
        append_round(
            messages,
            ParseResult(calls=calls, text=raw, native=False),
            [slot(0, calls[0], "18C"), slot(1, calls[1], "4C")],
            redactor=None,
        )
        results = (
            "[Tool results]\n"
            '<tool_result name="get_weather">\n18C\n</tool_result>\n'
            '<tool_result name="get_weather">\n4C\n</tool_result>'
        )
        assert [
            {"role": "assistant", "content": raw},
            {"role": "user", "content": results},
        ] == messages

    def test_redactor_scrubs_native_call_arguments(self):
        """With a redactor, a secret in the assistant's call arguments does not reach history."""
        call = ParsedToolCall("deploy", {"token": OPENAI_KEY, "target": "prod"}, "c1")
        messages: list[dict[str, Any]] = []
        append_round(
            messages,
            ParseResult(calls=[call], native=True),
            [slot(0, call, "ok")],
            redactor=Redactor(),
        )
        arguments = json.loads(messages[0]["tool_calls"][0]["function"]["arguments"])
        assert OPENAI_KEY not in json.dumps(messages)
        assert "prod" == arguments["target"]

    def test_redactor_scrubs_text_protocol_calls(self):
        """With a redactor, a secret inside a text-protocol call is removed from the raw text."""
        call = ParsedToolCall("deploy", {"token": AWS_KEY}, "c1")
        raw = f'<tool_call>{{"name": "deploy", "arguments": {{"token": "{AWS_KEY}"}}}}</tool_call>'
        messages: list[dict[str, Any]] = []
        append_round(
            messages,
            ParseResult(calls=[call], text=raw, native=False),
            [slot(0, call, "ok")],
            redactor=Redactor(),
        )
        assert AWS_KEY not in messages[0]["content"]
        assert messages[0]["content"].startswith('<tool_call>{"name": "deploy"')

    def test_assistant_calls_are_the_models_calls(self):
        """The assistant message keeps the call as the model made it, not as it was prepared."""
        call = ParsedToolCall("shell", {"command": "ls"}, "c1")
        prepared = slot(0, call, "ok", name="shell", arguments={"command": "ls", "approved": True})
        messages: list[dict[str, Any]] = []
        append_round(
            messages, ParseResult(calls=[call], native=True), [prepared], redactor=Redactor()
        )
        assert '{"command": "ls"}' == messages[0]["tool_calls"][0]["function"]["arguments"]


class TestHistoryInATurn:
    async def test_native_round_in_the_models_order(self, run_scenario):
        """Tool messages follow the model's order, one per call id, after the assistant call."""
        _, replay = await run_scenario(
            {
                "user": "weather?",
                "config": {"approval": AUTO},
                "tools": [WEATHER],
                "responses": [
                    {
                        "tool_calls": [
                            {"id": "b", "name": "get_weather", "arguments": {"city": "Oslo"}},
                            {"id": "a", "name": "get_weather", "arguments": {"city": "Paris"}},
                        ]
                    },
                    {"text": "done"},
                ],
            }
        )
        user, assistant, first, second, final = replay.state.messages
        assert ["b", "a"] == [c["id"] for c in assistant["tool_calls"]]
        assert [("b", "4C"), ("a", "18C")] == [
            (m["tool_call_id"], m["content"]) for m in (first, second)
        ]
        assert ("user", "assistant") == (user["role"], final["role"])

    async def test_text_protocol_round(self, run_scenario):
        """A text-protocol round is the raw assistant text and one `[Tool results]` message."""
        tags = (
            '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>\n'
            '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>'
        )
        _, replay = await run_scenario(
            {
                "user": "weather?",
                "config": {"approval": AUTO},
                "provider": {"native_tools": False},
                "tools": [WEATHER],
                "responses": [{"text": tags}, {"text": "done"}],
            }
        )
        assistant, results = replay.state.messages[-3:-1]
        assert {"role": "assistant", "content": tags} == assistant
        assert (
            "[Tool results]\n"
            '<tool_result name="get_weather">\n18C\n</tool_result>\n'
            '<tool_result name="get_weather">\n4C\n</tool_result>'
        ) == results["content"]

    async def test_redact_history_on(self, run_scenario):
        """With `redact_history` on, secrets in call arguments and in results are not in history."""
        _, replay = await run_scenario(
            {
                "user": "go",
                "config": {"approval": AUTO},
                "tools": [LEAKY],
                "responses": [
                    {
                        "tool_calls": [
                            {"id": "c1", "name": "read_env", "arguments": {"key": OPENAI_KEY}}
                        ]
                    },
                    {"text": "done"},
                ],
            }
        )
        history = json.dumps(replay.state.messages)
        assert (False, False) == (AWS_KEY in history, OPENAI_KEY in history)
        assert "AWS_ACCESS_KEY_ID=" in replay.state.messages[-2]["content"]

    async def test_redact_history_off(self, run_scenario):
        """With `redact_history` off, the model reads the raw result and its raw arguments."""
        _, replay = await run_scenario(
            {
                "user": "go",
                "config": {"approval": AUTO, "redact_history": False},
                "tools": [LEAKY],
                "responses": [
                    {
                        "tool_calls": [
                            {"id": "c1", "name": "read_env", "arguments": {"key": OPENAI_KEY}}
                        ]
                    },
                    {"text": "done"},
                ],
            }
        )
        assert f"AWS_ACCESS_KEY_ID={AWS_KEY}" == replay.state.messages[-2]["content"]
        call = replay.state.messages[-3]["tool_calls"][0]
        assert {"key": OPENAI_KEY} == json.loads(call["function"]["arguments"])

    async def test_runtime_keys_stay_out_of_the_assistant_message(self, run_scenario):
        """The runtime's `approved` marker and delivery default never appear as the model's args."""
        shell = {
            "name": "shell",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
            "responses": [{"default": {"output": "ok"}}],
        }
        ask = {
            "name": "ask_user",
            "parameters": {"type": "object", "properties": {"question": {"type": "string"}}},
            "responses": [{"default": {"output": "yes"}}],
        }
        _, replay = await run_scenario(
            {
                "agent": {"channel": "telegram"},
                "user": "go",
                "config": {"approval": AUTO},
                "tools": [shell, ask],
                "responses": [
                    {
                        "tool_calls": [
                            {"id": "c1", "name": "shell", "arguments": {"command": "ls"}},
                            {"id": "c2", "name": "ask_user", "arguments": {"question": "ok?"}},
                        ]
                    },
                    {"text": "done"},
                ],
            }
        )
        assistant = next(m for m in replay.state.messages if m.get("tool_calls"))
        assert [{"command": "ls"}, {"question": "ok?"}] == [
            json.loads(c["function"]["arguments"]) for c in assistant["tool_calls"]
        ]


GITHUB = "ghp_Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lm9Nb8"
SLACK = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"


def texts_turn(**config: Any) -> dict:
    """A turn with a secret in the user message, beside native calls, and in the answer."""
    return {
        "user": f"use {GITHUB} please",
        "system_prompt": f"Operator note: the deploy key is {SLACK}.",
        "config": {"approval": AUTO, **config},
        "tools": [{**WEATHER, "description": f"Weather; token {OPENAI_KEY}"}],
        "responses": [
            {
                "text": f"Calling with {OPENAI_KEY}",
                "tool_calls": [{"id": "c1", "name": "get_weather", "arguments": {"city": "Oslo"}}],
            },
            {"text": f"Done; your token was {GITHUB}."},
        ],
    }


class TestHistoryTextsAreRedacted:
    """With `redact_history` on, no text the history carries keeps a secret (issue 10, item 2)."""

    async def test_user_assistant_final_and_system_texts(self, run_scenario):
        """The user message, the text beside native calls, the answer and the system prompt."""
        _, replay = await run_scenario(texts_turn())
        messages = replay.state.messages
        by_role = [(m["role"], m.get("content")) for m in messages if m["role"] != "tool"]
        assert [
            ("system", "Operator note: the deploy key is [REDACTED:slack_token]."),
            ("user", "use [REDACTED:github_token] please"),
            ("assistant", "Calling with [REDACTED:openai_key]"),
            ("assistant", "Done; your token was [REDACTED:github_token]."),
        ] == by_role
        history = json.dumps(messages)
        assert [] == [s for s in (GITHUB, SLACK, OPENAI_KEY) if s in history]

    async def test_text_protocol_tool_descriptions_are_redacted(self, run_scenario):
        """The text protocol's tool list keeps the names and redacts the descriptions."""
        data = texts_turn()
        data["provider"] = {"native_tools": False}
        data["responses"] = [{"text": "no tools needed"}]
        _, replay = await run_scenario(data)
        system = replay.state.messages[0]["content"]
        assert "- get_weather: Weather; token [REDACTED:openai_key]" in system
        assert OPENAI_KEY not in system

    async def test_redact_history_off_keeps_the_texts(self, run_scenario):
        """With `redact_history` off, the history holds the texts as they were written."""
        _, replay = await run_scenario(texts_turn(redact_history=False))
        contents = [m.get("content") or "" for m in replay.state.messages]
        assert f"use {GITHUB} please" in contents
        assert f"Done; your token was {GITHUB}." == contents[-1]
