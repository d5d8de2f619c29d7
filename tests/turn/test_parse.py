"""Tests for `zeroclaw_obs.turn.parse`: responses become calls with ids (LIFECYCLE §3)."""

from __future__ import annotations

from typing import Any

import pytest

from zeroclaw_obs.observability.events import ToolCall, ToolCallStart, TurnOutcomeKind
from zeroclaw_obs.providers.base import NativeToolCall, ProviderResponse
from zeroclaw_obs.redaction import Redactor
from zeroclaw_obs.turn.parse import (
    MAX_ARGUMENT_DEPTH,
    CallIds,
    ParsedToolCall,
    ParseResult,
    depth_within,
    parse_response,
)

TOOLS = {"get_weather", "shell"}
PARIS_TAG = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
WEATHER = {
    "name": "get_weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    "responses": [{"default": {"output": "18C"}}],
}


def native(*calls: tuple[str | None, str, Any], text: str = "") -> ProviderResponse:
    return ProviderResponse(
        text=text,
        tool_calls=[NativeToolCall(id=cid, name=name, arguments=args) for cid, name, args in calls],
    )


def parse(response: ProviderResponse, *, strict: bool = False) -> ParseResult:
    return parse_response(response, tool_names=TOOLS, strict=strict)


class TestParseResponse:
    def test_native_ids_pass_through(self):
        """A native call keeps the provider's id, name and arguments."""
        result = parse(native(("call_abc", "get_weather", {"city": "Paris"})))
        expected = [ParsedToolCall("get_weather", {"city": "Paris"}, "call_abc")]
        assert (expected, True) == (result.calls, result.native)

    def test_native_call_without_id_gets_a_fresh_one(self):
        """Calls without an id (None or empty) get distinct, non-empty ids."""
        result = parse(native((None, "get_weather", {}), ("", "get_weather", {})))
        ids = [c.call_id for c in result.calls]
        assert all(ids) and 2 == len(set(ids))

    def test_fresh_ids_differ_between_responses(self):
        """Each parse mints a new id: two responses never share one."""
        first = parse(native((None, "shell", {})))
        second = parse(native((None, "shell", {})))
        assert first.calls[0].call_id != second.calls[0].call_id

    def test_native_string_arguments_are_decoded(self):
        """Native arguments given as a JSON string become a dict; an empty string is `{}`."""
        result = parse(native(("a", "shell", '{"command": "ls"}'), ("b", "shell", "")))
        assert [{"command": "ls"}, {}] == [c.arguments for c in result.calls]
        assert [None, None] == [c.arguments_error for c in result.calls]

    @pytest.mark.parametrize(
        ("raw", "problem"),
        [("{oops", "arguments are not valid JSON"), ('"ls"', "arguments must be a JSON object")],
    )
    def test_native_undecodable_arguments_are_flagged(self, raw, problem):
        """Undecodable native arguments become `{}` with a problem preparation will report."""
        (parsed,) = parse(native(("a", "shell", raw))).calls
        assert ({}, problem) == (parsed.arguments, parsed.arguments_error)

    def test_native_calls_win_over_text_tags(self):
        """When native calls are present, tags in the text are not parsed as more calls."""
        result = parse(native(("a", "shell", {}), text=PARIS_TAG))
        assert (["shell"], True) == ([c.name for c in result.calls], result.native)

    def test_text_calls_get_ids(self):
        """Text-protocol calls get distinct ids and mark the round as text protocol."""
        text = PARIS_TAG + '\n<tool_call>{"name": "shell", "arguments": "{}"}</tool_call>'
        result = parse(ProviderResponse(text=text))
        assert [("get_weather", {"city": "Paris"}), ("shell", {})] == [
            (c.name, c.arguments) for c in result.calls
        ]
        assert all(c.call_id for c in result.calls)
        assert 2 == len({c.call_id for c in result.calls})
        assert (False, text) == (result.native, result.text)

    def test_strict_ignores_text_tags(self):
        """With strict parsing a tag in a native provider's text is not a call."""
        result = parse(ProviderResponse(text=PARIS_TAG), strict=True)
        assert ([], False, PARIS_TAG) == (result.calls, result.parse_failed, result.text)

    def test_strict_hides_tags_from_a_text_protocol_provider_too(self):
        """Strict parsing hides the text protocol entirely: a text provider's tags are text."""
        result = parse_response(
            ProviderResponse(text=PARIS_TAG), tool_names=TOOLS, strict=True, native_provider=False
        )
        assert ([], PARIS_TAG) == (result.calls, result.text)

    def test_json_after_prose_is_final_text(self):
        """JSON preceded by prose is not a call: the response is a final answer."""
        text = 'Example: {"name": "get_weather", "arguments": {"city": "Paris"}}'
        result = parse(ProviderResponse(text=text))
        assert ([], False, text) == (result.calls, result.parse_failed, result.text)

    def test_whole_response_json_is_a_call(self):
        """A response that is one JSON call object, and nothing else, is a call."""
        result = parse(ProviderResponse(text='{"name": "shell", "arguments": {"command": "ls"}}'))
        assert [("shell", {"command": "ls"})] == [(c.name, c.arguments) for c in result.calls]

    def test_text_call_to_unknown_tool_is_ignored(self):
        """A text call to a name that is not an effective tool is not a call."""
        text = 'Note. <tool_call>{"name": "rm_rf", "arguments": {}}</tool_call>'
        result = parse(ProviderResponse(text=text))
        assert ([], True) == (result.calls, result.parse_failed)

    def test_broken_envelope_is_a_parse_failure(self):
        """A tag whose body is not JSON is a parse failure, not a final answer."""
        result = parse(ProviderResponse(text="<tool_call>{not json</tool_call>"))
        assert ([], True) == (result.calls, result.parse_failed)

    def test_empty_text_is_an_empty_final(self):
        """An empty response has no calls and no failure."""
        result = parse(ProviderResponse(text=""))
        assert ([], False, "") == (result.calls, result.parse_failed, result.text)


class TestCallIdsInATurn:
    async def test_fresh_id_is_used_everywhere(self, run_scenario, observer):
        """A native call with no id gets one id shared by events, observer and history."""
        _, replay = await run_scenario(
            {
                "user": "go",
                "config": {"approval": {"auto_approve": ["get_weather"]}},
                "tools": [WEATHER],
                "responses": [
                    {
                        "tool_calls": [
                            {"name": "get_weather", "arguments": {"city": "Paris"}},
                            {"name": "get_weather", "arguments": {"city": "Oslo"}},
                        ]
                    },
                    {"text": "done"},
                ],
            }
        )
        assistant = next(m for m in replay.state.messages if m.get("tool_calls"))
        ids = [c["id"] for c in assistant["tool_calls"]]
        assert all(ids) and 2 == len(set(ids))
        assert ids == [m["tool_call_id"] for m in replay.state.messages if m["role"] == "tool"]
        assert ids == [e.id for e in replay.events.events if e.type == "tool_call"]
        assert ids == [e.id for e in replay.events.events if e.type == "tool_result"]
        assert ids == [e.tool_call_id for e in observer.of(ToolCallStart)]
        assert ids == [e.tool_call_id for e in observer.of(ToolCall)]

    async def test_text_call_id_is_used_everywhere(self, run_scenario, observer):
        """A text-protocol call's minted id is shared by its TurnEvents and observer events."""
        await run_scenario(
            {
                "user": "go",
                "config": {"approval": {"auto_approve": ["get_weather"]}},
                "provider": {"native_tools": False},
                "tools": [WEATHER],
                "responses": [{"text": PARIS_TAG}, {"text": "done"}],
            }
        )
        (start,) = observer.of(ToolCallStart)
        (end,) = observer.of(ToolCall)
        assert start.tool_call_id and start.tool_call_id == end.tool_call_id

    async def test_strict_native_turn_treats_tags_as_text(self, run_scenario):
        """With `strict_tool_parsing` a native provider's tag is the final answer; nothing runs."""
        outcome, replay = await run_scenario(
            {
                "user": "go",
                "config": {"strict_tool_parsing": True, "approval": {"auto_approve": ["*"]}},
                "tools": [WEATHER],
                "responses": [{"text": PARIS_TAG}, {"text": "never"}],
            }
        )
        assert (TurnOutcomeKind.FINAL, PARIS_TAG) == (outcome.kind, outcome.text)
        assert [] == [e for e in replay.events.events if e.type == "tool_call"]
        assert 1 == replay.provider.remaining

    async def test_strict_parsing_hides_the_tags_from_a_text_protocol_provider_too(
        self, run_scenario
    ):
        """Under `strict_tool_parsing` a text-protocol provider's tags are plain text."""
        outcome, replay = await run_scenario(
            {
                "user": "go",
                "config": {"strict_tool_parsing": True, "approval": {"auto_approve": ["*"]}},
                "provider": {"native_tools": False},
                "tools": [WEATHER],
                "responses": [{"text": PARIS_TAG}, {"text": "never"}],
            }
        )
        assert (TurnOutcomeKind.FINAL, PARIS_TAG) == (outcome.kind, outcome.text)
        assert [] == [e for e in replay.events.events if e.type == "tool_call"]
        assert 1 == replay.provider.remaining

    async def test_json_after_prose_ends_a_native_turn(self, run_scenario):
        """A native provider's JSON-looking text after prose is the final answer."""
        text = 'Call it like this: {"name": "get_weather", "arguments": {"city": "Paris"}}'
        outcome, replay = await run_scenario(
            {
                "user": "go",
                "config": {"approval": {"auto_approve": ["*"]}},
                "tools": [WEATHER],
                "responses": [{"text": text}, {"text": "never"}],
            }
        )
        assert (TurnOutcomeKind.FINAL, text) == (outcome.kind, outcome.text)
        assert {"role": "assistant", "content": text} == replay.state.messages[-1]


GITHUB = "ghp_Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lm9Nb8"
OPENAI = "sk-proj-Qm3Vx8Lr2Tz7Wn4Kp9Bs6Hd1Jf5Gc0Ya"


def nested(depth: int) -> dict:
    """An object `depth` levels deep (the outer object is level 1)."""
    value: dict = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


class TestCallIds:
    def test_clean_ids_pass_through(self):
        """An id the redactor leaves alone is kept as the provider sent it."""
        ids = CallIds(Redactor())
        assert ["call_abc123", "toolu_01A09q90qw90lq917835lq9"] == [
            ids.assign("call_abc123"),
            ids.assign("toolu_01A09q90qw90lq917835lq9"),
        ]

    def test_an_id_holding_a_token_is_redacted_with_a_suffix(self):
        """A secret in an id becomes `[REDACTED:…]-n`, n counting the turn's redacted ids."""
        ids = CallIds(Redactor())
        assert "[REDACTED:github_token]-1" == ids.assign(GITHUB)
        assert "call [REDACTED:openai_key]-2" == ids.assign(f"call {OPENAI}")

    def test_two_secret_ids_never_collide(self):
        """Two different secret ids of one rule get two different ids, in a fixed order."""
        ids = CallIds(Redactor())
        other = GITHUB[:-4] + "AbCd"
        assert ["[REDACTED:github_token]-1", "[REDACTED:github_token]-2"] == [
            ids.assign(GITHUB),
            ids.assign(other),
        ]

    def test_suffix_skips_an_id_already_used(self):
        """A suffixed id never repeats an id the turn already uses."""
        ids = CallIds(Redactor())
        ids.assign("[REDACTED:github_token]-1")
        assert "[REDACTED:github_token]-2" == ids.assign(GITHUB)

    def test_missing_id_gets_a_fresh_one(self):
        """A call without an id gets `call_{uuid4 hex}`."""
        assert CallIds(Redactor()).assign(None).startswith("call_")

    def test_parse_uses_the_turn_ids(self):
        """`parse_response` gives native calls the ids `CallIds` assigns."""
        response = native((GITHUB, "get_weather", {}), ("c2", "get_weather", {}))
        result = parse_response(
            response, tool_names=TOOLS, strict=False, call_ids=CallIds(Redactor())
        )
        assert ["[REDACTED:github_token]-1", "c2"] == [c.call_id for c in result.calls]


class TestArgumentDepth:
    def test_depth_at_the_cap_is_accepted(self):
        """Arguments whose values sit at level 64 are within the cap."""
        assert depth_within(nested(MAX_ARGUMENT_DEPTH))
        assert not depth_within(nested(MAX_ARGUMENT_DEPTH + 1))

    def test_very_deep_values_do_not_recurse(self):
        """A 100,000-level structure is refused without RecursionError."""
        value: list = []
        for _ in range(100_000):
            value = [value]
        assert not depth_within({"a": value})

    @pytest.mark.parametrize("as_json", [False, True])
    def test_native_arguments_deeper_than_the_cap_are_invalid(self, as_json):
        """Native arguments nested past the cap (object or JSON text) are invalid, emptied."""
        deep: Any = nested(10_000)
        if as_json:
            deep = '{"a": ' * 10_000 + "{}" + "}" * 10_000
        (call,) = parse(native(("c1", "get_weather", deep))).calls
        assert ({}, "arguments are nested deeper than 64 levels") == (
            call.arguments,
            call.arguments_error,
        )


class TestDeepArgumentsInATurn:
    async def test_deep_native_arguments_become_an_invalid_arguments_slot(
        self, run_scenario, observer
    ):
        """The slot reads `Error: invalid arguments: …`; the turn goes on to its answer."""
        deep = '{"city": ' + '{"a": ' * 5_000 + '"x"' + "}" * 5_000 + "}"
        outcome, _ = await run_scenario(
            {
                "user": "go",
                "config": {"approval": {"auto_approve": ["get_weather"]}},
                "tools": [WEATHER],
                "responses": [
                    {"tool_calls": [{"id": "c1", "name": "get_weather", "arguments": deep}]},
                    {"text": "done"},
                ],
            }
        )
        assert TurnOutcomeKind.FINAL == outcome.kind
        (closed,) = observer.of(ToolCall)
        assert "Error: invalid arguments: arguments are nested deeper than 64 levels" == (
            closed.result
        )


class TestSecretCallIdsInATurn:
    async def test_a_secret_id_is_redacted_on_every_surface(self, run_scenario, observer):
        """Events, observer and history use the redacted id, and history stays consistent."""
        _, replay = await run_scenario(
            {
                "user": "go",
                "config": {"approval": {"auto_approve": ["get_weather"]}},
                "tools": [WEATHER],
                "responses": [
                    {
                        "tool_calls": [
                            {"id": f"call {GITHUB}", "name": "get_weather", "arguments": {}},
                            {"id": GITHUB[:-4] + "WxYz", "name": "get_weather", "arguments": {}},
                        ]
                    },
                    {"text": "done"},
                ],
            }
        )
        expected = ["call [REDACTED:github_token]-1", "[REDACTED:github_token]-2"]
        assistant = next(m for m in replay.state.messages if m.get("tool_calls"))
        assert expected == [c["id"] for c in assistant["tool_calls"]]
        assert expected == [m["tool_call_id"] for m in replay.state.messages if m["role"] == "tool"]
        assert expected == [e.id for e in replay.events.events if e.type == "tool_result"]
        assert expected == [e.tool_call_id for e in observer.of(ToolCallStart)]
        assert expected == [e.tool_call_id for e in observer.of(ToolCall)]


class TestShownNameAliases:
    def test_a_text_call_to_a_shown_name_reaches_the_real_tool(self):
        """A text-protocol call to the name the prompt listed resolves to the real tool."""
        real = f"t.{GITHUB}"
        text = '<tool_call>{"name": "t.[REDACTED:github_token]", "arguments": {}}</tool_call>'
        result = parse_response(
            ProviderResponse(text=text),
            tool_names={real},
            strict=False,
            native_provider=False,
            aliases={"t.[REDACTED:github_token]": real},
        )
        assert [real] == [c.name for c in result.calls]
