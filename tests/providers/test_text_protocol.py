"""Tests for `zeroclaw_obs.providers.text_protocol` (LIFECYCLE §3 parsing, §7 text history)."""

# STYLE §8 writes asserts as `expected == actual`, which ruff's SIM300 reads as a Yoda condition.

from __future__ import annotations

import json
import random
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zeroclaw_obs.providers import text_protocol
from zeroclaw_obs.providers.text_protocol import (
    MAX_PARSE_RETRIES,
    PARSE_ERROR_FEEDBACK,
    PARSE_FAILURE_FINAL,
    TextParse,
    TextToolCall,
    build_tool_instructions,
    format_tool_results,
    is_parse_failure,
    parse_text_tool_calls,
    speaks_text_protocol,
    strip_tool_envelopes,
)
from zeroclaw_obs.receipts import compact_json
from zeroclaw_obs.tools.base import ToolSpec

TOOLS = {"shell", "get_time", "Read_File"}

SPECS = [
    ToolSpec(
        name="shell",
        description="Run a shell command.",
        parameters={
            "type": "object",
            "properties": {"command": {"type": "string"}},
            "required": ["command"],
        },
    ),
    ToolSpec(
        name="get_time",
        description="Current time,\n  in UTC.",
        parameters={"type": "object", "properties": {}},
    ),
]


def parse(text: str) -> TextParse:
    return parse_text_tool_calls(text, TOOLS)


def shell(command: str = "ls") -> TextToolCall:
    return TextToolCall(name="shell", arguments={"command": command})


class TestModule:
    def test_all_names_exist(self):
        """Every name in `__all__` is defined by the module."""
        assert [] == [name for name in text_protocol.__all__ if not hasattr(text_protocol, name)]


class TestSpeaksTextProtocol:
    @pytest.mark.parametrize(
        ("native_tools", "strict", "expected"),
        [(False, False, True), (False, True, False), (True, False, False), (True, True, False)],
    )
    def test_strict_parsing_hides_the_protocol_from_every_provider(
        self, native_tools, strict, expected
    ):
        """Only a text-protocol provider without strict parsing is taught and parsed for tags."""
        assert expected == speaks_text_protocol(native_tools=native_tools, strict=strict)


STRICT_TEXT_TURN = {
    "user": "weather?",
    "provider": {"native_tools": False},
    "config": {"strict_tool_parsing": True, "approval": {"auto_approve": ["get_weather"]}},
    "tools": [{"name": "get_weather", "responses": [{"default": {"output": "18C"}}]}],
    "responses": [
        {"text": '<tool_call>{"name": "get_weather", "arguments": {}}</tool_call> and more'}
    ],
}


class TestStrictParsingInATurn:
    async def test_no_tag_instructions_in_the_prompt(self, run_scenario):
        """Strict parsing: a text-protocol provider's system prompt teaches no tags."""
        data = {**STRICT_TEXT_TURN, "responses": [{"text": "no tools for me"}]}
        _, replay = await run_scenario(data)
        messages = replay.provider.requests[0].messages  # the live history: systems only
        prompt = " ".join(str(m["content"]) for m in messages if m["role"] == "system")
        assert "<tool_call>" not in prompt

    async def test_tags_in_the_reply_are_plain_text(self, run_scenario):
        """Strict parsing: tags a text-protocol model writes run nothing; they are its answer."""
        outcome, replay = await run_scenario(STRICT_TEXT_TURN)
        assert STRICT_TEXT_TURN["responses"][0]["text"] == outcome.text
        assert [] == [e for e in replay.events.events if e.type == "tool_call"]

    async def test_without_strict_parsing_the_tags_are_calls(self, run_scenario):
        """The same turn without strict parsing teaches the tags and runs the call."""
        data = {**STRICT_TEXT_TURN, "config": {"approval": {"auto_approve": ["get_weather"]}}}
        data["responses"] = [*STRICT_TEXT_TURN["responses"], {"text": "18C."}]
        outcome, replay = await run_scenario(data)
        assert "18C." == outcome.text
        assert "<tool_call>" in replay.provider.requests[0].messages[0]["content"]


class TestBuildToolInstructions:
    def test_mentions_every_tool_with_description_and_compact_schema(self):
        """Each tool appears with its name, description and parameters as compact JSON."""
        text = build_tool_instructions(SPECS)
        assert "- shell: Run a shell command." in text
        assert "- get_time: Current time, in UTC." in text
        expected = (
            '  Parameters: {"properties":{"command":{"type":"string"}},'
            '"required":["command"],"type":"object"}'
        )
        assert expected in text.splitlines()

    def test_lists_tools_in_the_given_order(self):
        """Tools are listed in the order of the specs."""
        text = build_tool_instructions(SPECS)
        assert text.index("- shell:") < text.index("- get_time:")

    def test_describes_the_tool_call_and_tool_result_formats(self):
        """The section shows `<tool_call>{"name": …, "arguments": {…}}</tool_call>` and the
        `<tool_result name="…">` block."""
        text = build_tool_instructions(SPECS)
        assert (
            '<tool_call>{"name": "tool_name", "arguments": {"param": "value"}}</tool_call>' in text
        )
        assert '<tool_result name="tool_name">' in text
        assert "</tool_result>" in text
        assert "several tags" in text

    def test_output_is_deterministic(self):
        """The same specs always give the same text."""
        same = [
            ToolSpec(name=s.name, description=s.description, parameters=dict(s.parameters))
            for s in SPECS
        ]
        assert build_tool_instructions(SPECS) == build_tool_instructions(same)

    def test_schema_key_order_does_not_change_the_text(self):
        """Parameters are rendered with sorted keys, so key order does not matter."""
        a = ToolSpec(name="t", description="d", parameters={"type": "object", "properties": {}})
        b = ToolSpec(name="t", description="d", parameters={"properties": {}, "type": "object"})
        assert build_tool_instructions([a]) == build_tool_instructions([b])

    def test_no_tools_gives_no_section(self):
        """With no tools the model is not told about tools at all."""
        assert "" == build_tool_instructions([])


class TestParseWholeResponseJson:
    def test_call_object(self):
        """A whole response that is `{"name": …, "arguments": {…}}` is a call."""
        text = '  {"name": "shell", "arguments": {"command": "ls"}}\n'
        assert TextParse(calls=[shell()], prose="", envelope_seen=True) == parse(text)

    def test_array_of_call_objects(self):
        """A whole-response JSON array of call objects yields every call, in order."""
        text = json.dumps(
            [
                {"name": "get_time", "arguments": {}},
                {"name": "shell", "arguments": {"command": "ls"}},
            ]
        )
        expected = [TextToolCall(name="get_time", arguments={}), shell()]
        assert expected == parse(text).calls

    def test_tool_calls_wrapper(self):
        """A whole response `{"tool_calls": [...]}` yields its calls."""
        text = json.dumps(
            {
                "tool_calls": [
                    {"name": "shell", "arguments": {"command": "pwd"}},
                    {"name": "get_time"},
                ]
            }
        )
        expected = [shell("pwd"), TextToolCall(name="get_time", arguments={})]
        assert expected == parse(text).calls

    def test_openai_style_function_elements(self):
        """Elements may be OpenAI style `{"function": {"name", "arguments"}}`."""
        text = json.dumps(
            {
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "shell", "arguments": '{"command": "ls"}'},
                    }
                ]
            }
        )
        assert [shell()] == parse(text).calls

    def test_openai_style_bare_object(self):
        """A whole response that is one OpenAI style function object is a call."""
        text = json.dumps({"function": {"name": "get_time", "arguments": {}}})
        assert [TextToolCall(name="get_time", arguments={})] == parse(text).calls

    def test_json_preceded_by_prose_is_not_a_call(self):
        """JSON preceded by prose is not a call."""
        text = 'I would call {"name": "shell", "arguments": {"command": "ls"}}'
        result = parse(text)
        assert [] == result.calls
        assert False is result.envelope_seen
        assert text == result.prose

    def test_json_followed_by_prose_is_not_a_call(self):
        """Only a whole response counts for bare JSON: trailing prose makes it prose."""
        text = '{"name": "shell", "arguments": {"command": "ls"}} and then I stopped'
        assert [] == parse(text).calls

    def test_plain_json_answer_is_not_an_envelope(self):
        """A JSON final answer without the call shape is neither a call nor an envelope."""
        text = '{"name": "Alice", "age": 31}'
        assert TextParse(calls=[], prose=text, envelope_seen=False) == parse(text)


class TestParseTags:
    @pytest.mark.parametrize("tag", ["tool_call", "tool_calls", "toolcall", "tool-call"])
    def test_every_tag_name_with_a_json_body(self, tag):
        """`<tool_call>`, `<tool_calls>`, `<toolcall>` and `<tool-call>` carry a JSON call."""
        text = f'<{tag}>{{"name": "shell", "arguments": {{"command": "ls"}}}}</{tag}>'
        assert TextParse(calls=[shell()], prose="", envelope_seen=True) == parse(text)

    def test_tool_calls_tag_with_array_body(self):
        """A `<tool_calls>` body may be an array of calls."""
        body = json.dumps([{"name": "get_time"}, {"name": "shell", "arguments": {"command": "ls"}}])
        expected = [TextToolCall(name="get_time", arguments={}), shell()]
        assert expected == parse(f"<tool_calls>{body}</tool_calls>").calls

    def test_tool_calls_tag_with_wrapper_object_body(self):
        """A `<tool_calls>` body may be a `{"tool_calls": [...]}` object."""
        body = json.dumps({"tool_calls": [{"name": "shell", "arguments": {"command": "ls"}}]})
        assert [shell()] == parse(f"<tool_calls>{body}</tool_calls>").calls

    def test_tag_tolerates_whitespace_and_a_json_fence(self):
        """Whitespace and a ```json fence inside the tag are tolerated."""
        text = (
            "<tool_call>\n  ```json\n"
            '  {"name": "shell", "arguments": {"command": "ls"}}\n'
            "  ```\n</tool_call>"
        )
        assert [shell()] == parse(text).calls

    def test_tag_names_are_case_insensitive(self):
        """An upper-case tag is still a tag."""
        text = '<TOOL_CALL>{"name": "shell", "arguments": {"command": "ls"}}</Tool_Call>'
        assert [shell()] == parse(text).calls

    def test_tags_may_appear_after_prose(self):
        """Tags count anywhere; the prose around them is kept."""
        text = (
            "Let me look.\n\n"
            '<tool_call>{"name": "shell", "arguments": {"command": "ls"}}</tool_call>\n\n'
            "Back soon."
        )
        assert TextParse(
            calls=[shell()], prose="Let me look.\n\nBack soon.", envelope_seen=True
        ) == parse(text)

    def test_multiple_tags_in_order_of_appearance(self):
        """Several tags of any kind yield their calls in the order they appear."""
        text = (
            '<toolcall>{"name": "shell", "arguments": {"command": "one"}}</toolcall> then '
            "```tool_call\n"
            '{"name": "get_time"}\n'
            "```\n"
            '<tool-call>{"name": "shell", "arguments": {"command": "two"}}</tool-call>'
        )
        expected = [shell("one"), TextToolCall(name="get_time", arguments={}), shell("two")]
        assert expected == parse(text).calls

    def test_invalid_tag_does_not_hide_a_valid_one(self):
        """A broken tag is dropped while a valid sibling still yields its call."""
        text = (
            "<tool_call>{not json}</tool_call>"
            '<tool_call>{"name": "shell", "arguments": {"command": "ls"}}</tool_call>'
        )
        result = parse(text)
        assert [shell()] == result.calls
        assert False is is_parse_failure(result)


class TestParseFences:
    def test_tool_call_fence(self):
        """```` ```tool_call ```` fenced JSON is a call."""
        text = 'Checking.\n```tool_call\n{"name": "shell", "arguments": {"command": "ls"}}\n```'
        assert TextParse(calls=[shell()], prose="Checking.", envelope_seen=True) == parse(text)

    def test_plain_json_fence_is_not_a_call(self):
        """A ```json fence outside a tag is an example, not a call."""
        text = 'Example:\n```json\n{"name": "shell", "arguments": {"command": "ls"}}\n```'
        assert TextParse(calls=[], prose=text, envelope_seen=False) == parse(text)


class TestParseArguments:
    def test_string_arguments_are_decoded(self):
        """`arguments` given as a JSON string is decoded."""
        text = '<tool_call>{"name": "shell", "arguments": "{\\"command\\": \\"ls\\"}"}</tool_call>'
        assert [shell()] == parse(text).calls

    def test_missing_arguments_mean_empty_object(self):
        """Missing `arguments` means `{}`."""
        text = '<tool_call>{"name": "get_time"}</tool_call>'
        assert [TextToolCall(name="get_time", arguments={})] == parse(text).calls

    @pytest.mark.parametrize("raw", ["null", '""', '"   "'])
    def test_null_or_empty_string_arguments_mean_empty_object(self, raw):
        """`null` or an empty string for `arguments` also means `{}`."""
        text = f'<tool_call>{{"name": "get_time", "arguments": {raw}}}</tool_call>'
        assert [TextToolCall(name="get_time", arguments={})] == parse(text).calls

    def test_invalid_json_string_arguments_invalidate_the_call(self):
        """An `arguments` string that is not JSON makes the call invalid."""
        text = '<tool_call>{"name": "shell", "arguments": "{command: ls"}</tool_call>'
        result = parse(text)
        assert [] == result.calls
        assert True is is_parse_failure(result)

    @pytest.mark.parametrize("raw", ["[1, 2]", "42", '"[1]"', "true"])
    def test_non_object_arguments_invalidate_the_call(self, raw):
        """Arguments that are not an object (directly or as a JSON string) are invalid."""
        text = f'<tool_call>{{"name": "shell", "arguments": {raw}}}</tool_call>'
        assert [] == parse(text).calls

    def test_over_deep_arguments_invalidate_the_call(self):
        """Arguments nested far deeper than any tool needs are treated as no call."""
        deep = "[" * 200 + "]" * 200
        text = f'<tool_call>{{"name": "shell", "arguments": {{"x": {deep}}}}}</tool_call>'
        assert [] == parse(text).calls


class TestParseNames:
    def test_unknown_names_are_ignored(self):
        """Text calls whose lowercased name is not an effective tool are ignored."""
        text = (
            '<tool_call>{"name": "rm_rf", "arguments": {}}</tool_call>'
            '<tool_call>{"name": "shell", "arguments": {"command": "ls"}}</tool_call>'
        )
        assert [shell()] == parse(text).calls

    def test_names_match_case_insensitively_and_return_the_canonical_name(self):
        """A name matching case-insensitively becomes the canonical tool name."""
        text = '<tool_call>{"name": "READ_FILE", "arguments": {"path": "a"}}</tool_call>'
        assert [TextToolCall(name="Read_File", arguments={"path": "a"})] == parse(text).calls

    def test_non_string_name_is_invalid(self):
        """A call whose name is not a string is dropped."""
        assert [] == parse('<tool_call>{"name": 7, "arguments": {}}</tool_call>').calls

    def test_only_unknown_names_is_a_parse_failure(self):
        """An envelope whose every call names an unknown tool yields no valid call."""
        result = parse('{"name": "launch_missiles", "arguments": {}}')
        assert TextParse(calls=[], prose="", envelope_seen=True) == result
        assert True is is_parse_failure(result)


class TestEnvelopeDetection:
    @pytest.mark.parametrize(
        "text",
        [
            "<tool_call>{not json}</tool_call>",
            "<tool_calls>[1, 2</tool_calls>",
            "<toolcall>oops</toolcall>",
            "<tool-call></tool-call>",
            '<tool_call>{"name": "shell", "arguments": {"command": "ls"}}',
            "```tool_call\nnot json\n```",
            '{"name": "shell", "arguments": {"command": "ls"}',
            '{"tool_calls": "nope"}',
        ],
    )
    def test_envelope_with_no_valid_call_is_a_parse_failure(self, text):
        """A response that looks like a tool envelope but yields no valid call is rejected."""
        result = parse(text)
        assert True is result.envelope_seen
        assert [] == result.calls
        assert True is is_parse_failure(result)

    @pytest.mark.parametrize(
        "text",
        [
            "The current time is 12:00 UTC.",
            "",
            "Use the `shell` tool carefully; results arrive as tool_result blocks.",
            "[1, 2, 3]",
            "{}",
        ],
    )
    def test_plain_final_answer_is_not_an_envelope(self, text):
        """A plain final answer is not an envelope and not a parse failure."""
        result = parse(text)
        assert TextParse(calls=[], prose=text.strip(), envelope_seen=False) == result
        assert False is is_parse_failure(result)

    def test_valid_call_is_not_a_parse_failure(self):
        """A response with a valid call is not a parse failure."""
        assert False is is_parse_failure(parse('{"name": "get_time", "arguments": {}}'))


class TestParseRobustness:
    @pytest.mark.parametrize(
        "text",
        [
            "<tool_call>" * 3,
            "</tool_call>" * 3 + "<tool_call>",
            "<tool_call><tool_call>{}</tool_call>",
            "```tool_call",
            "<tool_call " + "a" * 500 + ">",
            "[" * 100_000,
            "<tool_call>" + "[" * 100_000 + "]" * 100_000 + "</tool_call>",
            '{"name": "shell", "arguments": ' + "9" * 10_000 + "}",
            "\x00\udcff<tool_call>\u0130\u0130</tool_call>",
        ],
    )
    def test_garbage_never_raises(self, text):
        """Unbalanced tags, over-deep or over-long JSON and odd characters yield no call."""
        assert [] == parse(text).calls

    def test_random_fragments_never_raise(self):
        """Random mixes of protocol fragments always parse to a `TextParse` without raising."""
        fragments = [
            "<tool_call>", "</tool_call>", "<tool_calls>", "</toolcall>", "<tool-call>",
            "```", "```tool_call\n", "```json\n", '{"name": "shell"', ', "arguments": ',
            '{"command": "ls"}', "}", "[", "]", '"', "\\", "prose ", "\n", "\u0130", "null",
        ]  # fmt: skip
        rng = random.Random(1234)
        for _ in range(2000):
            text = "".join(rng.choice(fragments) for _ in range(rng.randint(0, 12)))
            result = parse(text)
            assert isinstance(result, TextParse)
            assert all(call.name in TOOLS for call in result.calls)

    @pytest.mark.parametrize(
        "text",
        [
            "<tool_call>" * 100_000,
            "<tool_call><toolcall>```tool_call " * 40_000,
            "<tool_call>{}</tool_call>" * 50_000,
            "x" * 2_000_000,
        ],
    )
    def test_huge_inputs_parse_in_linear_time(self, text):
        """Large hostile responses parse quickly: no quadratic rescans, no regex backtracking."""
        started = time.perf_counter()
        parse(text)
        strip_tool_envelopes(text)
        assert time.perf_counter() - started < 5.0


# Pieces of the protocol and of hostile JSON: tags, fences, braces, deep nesting, huge and
# non-finite numbers, lone surrogates. Random text is mixed in as well.
HOSTILE_PIECES = [
    "<tool_call>", "</tool_call>", "<tool_calls>", "</tool_calls>", "<toolcall>", "<tool-call>",
    "</ tool_call >", "<TOOL_CALL a=1>", "```", "```tool_call\n", "```json\n", "\n", " ",
    '{"name": "shell", "arguments": ', '{"name": "get_time"', '"arguments": ', '{"tool_calls": [',
    '{"function": {"name": "Read_File", "arguments": "{\\"path\\": 1}"}}', '"{}"',
    '{"command": "ls"}', "{", "}", "[", "]", ",", ":", '"', "\\", "\\u", "\\ud800",
    "[" * 5000, "]" * 5000, '{"a":' * 200, "}" * 200, "9" * 5000, "1e999", "-1e999", "NaN",
    "Infinity", "-0", "1.5e-7", "\ud800", "\udfff", "\x00", "\u202e", "\u0130", "null",
    "true", "prose ",
]  # fmt: skip

hostile_text = st.lists(st.sampled_from(HOSTILE_PIECES) | st.text(max_size=6), max_size=30).map(
    "".join
)


def _depth(value, depth: int = 1) -> int:
    if isinstance(value, dict):
        return max((_depth(v, depth + 1) for v in value.values()), default=depth)
    if isinstance(value, list):
        return max((_depth(v, depth + 1) for v in value), default=depth)
    return depth


class TestNeverRaises:
    @settings(max_examples=200, deadline=None, derandomize=True)
    @given(text=hostile_text | st.text())
    def test_parse_never_raises(self, text):
        """Any text parses to valid calls of effective tools with bounded, encodable arguments."""
        result = parse(text)
        assert isinstance(result, TextParse)
        assert isinstance(is_parse_failure(result), bool)
        for call in result.calls:
            assert call.name in TOOLS
            assert isinstance(call.arguments, dict)
            assert _depth(call.arguments) <= 64
            compact_json(call.arguments)  # receipts and the duplicate guard can read them
        assert isinstance(strip_tool_envelopes(text), str)

    @settings(max_examples=200, deadline=None, derandomize=True)
    @given(
        results=st.lists(st.tuples(hostile_text | st.text(), hostile_text | st.text()), max_size=4)
    )
    def test_format_tool_results_never_raises(self, results):
        """Any names and result texts render into one `[Tool results]` message."""
        assert format_tool_results(results).startswith("[Tool results]")


class TestIsParseFailure:
    def test_envelope_without_calls_fails(self):
        """Seen envelope with no calls is a failure."""
        assert True is is_parse_failure(TextParse(calls=[], prose="", envelope_seen=True))

    def test_envelope_with_calls_passes(self):
        """Seen envelope with a call is not a failure."""
        assert False is is_parse_failure(TextParse(calls=[shell()], prose="", envelope_seen=True))

    def test_no_envelope_passes(self):
        """No envelope and no calls is a final answer, not a failure."""
        assert False is is_parse_failure(TextParse(calls=[], prose="hi", envelope_seen=False))


class TestParseFailureConstants:
    def test_feedback_starts_with_the_lifecycle_marker(self):
        """The feedback starts with `[Tool call parse error]`."""
        assert PARSE_ERROR_FEEDBACK.startswith("[Tool call parse error]")

    def test_feedback_shows_the_correct_format(self):
        """The feedback shows a `<tool_call>` example that itself parses as an envelope."""
        assert '<tool_call>{"name": "tool_name", "arguments":' in PARSE_ERROR_FEEDBACK
        example = parse_text_tool_calls(PARSE_ERROR_FEEDBACK, {"tool_name"})
        assert [TextToolCall(name="tool_name", arguments={"param": "value"})] == example.calls

    def test_final_text_and_retry_budget(self):
        """After 2 retries the turn ends with LIFECYCLE's exact final text."""
        expected = (
            "I generated an internal tool-call format error and could not complete this "
            "request. Please try again."
        )
        assert expected == PARSE_FAILURE_FINAL
        assert 2 == MAX_PARSE_RETRIES


class TestFormatToolResults:
    def test_exact_output(self):
        """Results become `[Tool results]\\n` then one `<tool_result name="…">` block each."""
        expected = (
            "[Tool results]\n"
            '<tool_result name="shell">\nfile.txt\n</tool_result>\n'
            '<tool_result name="get_time">\n12:00\n</tool_result>'
        )
        assert expected == format_tool_results([("shell", "file.txt"), ("get_time", "12:00")])

    def test_name_is_attribute_escaped_and_text_verbatim(self):
        """The name escapes quotes, `<`, `>` and `&`; the result text is passed verbatim."""
        expected = (
            "[Tool results]\n"
            '<tool_result name="a&quot;b&lt;c&gt;&amp;d">\n<b>"raw" & text</b>\n</tool_result>'
        )
        assert expected == format_tool_results([('a"b<c>&d', '<b>"raw" & text</b>')])

    def test_no_results(self):
        """With no results only the header remains."""
        assert "[Tool results]\n" == format_tool_results([])


class TestStripToolEnvelopes:
    def test_removes_tags_and_fences_keeping_prose(self):
        """Envelopes are cut out and the prose around them is joined and stripped."""
        text = "  Checking <tool_call>{}</tool_call> now.\n\n```tool_call\n{}\n```\n\nDone.  "
        assert "Checking now.\n\nDone." == strip_tool_envelopes(text)

    def test_unclosed_envelope_is_cut_to_the_end(self):
        """An unclosed envelope, usually a truncated response, is cut to the end."""
        assert "Sure." == strip_tool_envelopes('Sure. <tool_call>{"name": "shell"')

    def test_orphan_closing_tags_are_dropped(self):
        """A stray closing tag does not leak into the prose."""
        assert "Done." == strip_tool_envelopes("Done.</tool_call>")

    def test_bare_json_envelope_becomes_empty(self):
        """A whole response that is a bare JSON envelope leaves no prose."""
        assert "" == strip_tool_envelopes('{"tool_calls": []}')

    def test_plain_text_is_only_stripped(self):
        """Text without envelopes is returned stripped and otherwise unchanged."""
        assert "a <b> c" == strip_tool_envelopes("  a <b> c \n")
