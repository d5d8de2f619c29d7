"""Tests for `observability/logs/flat_json.py`: own lines in one pass, the chain's bytes."""

from __future__ import annotations

import io
import logging
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zeroclaw_obs.observability.events import (
    Correlation,
    EventIds,
    ToolCall,
    ToolCallStart,
    ToolOutcome,
)
from zeroclaw_obs.observability.logs.chain import LineWriter, iso_utc
from zeroclaw_obs.observability.logs.flat_json import FlatJsonRenderer
from zeroclaw_obs.observability.logs.logs import LogObserver
from zeroclaw_obs.redaction import RUNTIME_IDS, FlatRecordRedactor, Redactor

from ...builders import SECRET

WHEN = 1717243200.000001
TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
SPAN_ID = "b7ad6b7169203331"
RECEIPT = "zc-receipt-1712345678-" + "A" * 43
HEX_RULE = {"hex_key": "[0-9a-f]{16,32}"}
"""An operator's rule that matches the runtime's own ids: they are kept only under their key."""

RECORDS = {
    "a clean tool line": {
        "trace_id": TRACE_ID,
        "span_id": SPAN_ID,
        "turn_id": "turn-1",
        "iteration": 1,
        "tool_call_id": "call_1",
        "tool": "edit_file",
        "known_tool": True,
        "success": False,
        "duration_ms": 0.25,
        "error_type": None,
        "receipt": RECEIPT,
        "redactions": 0,
    },
    "secrets in a tool name and a call id": {"tool_call_id": SECRET, "tool": f"x {SECRET}"},
    "an id under another key": {"tool": TRACE_ID, "trace_id": f"{TRACE_ID} {SECRET}"},
    "a sensitive key": {"password": "hunter2hunter2", "pin_code": 1234},
    "a name/value pair": {"name": "DB_PASSWORD", "value": "hunter2hunter2"},
    "a value that names a sensitive key": {"field": "api_key", "other": 1},
    "a card number as an integer": {"number": 4111111111111111, "small": -(10**12) + 1},
    "floats": {"a": -0.0, "b": 1e16, "c": 1.5e-7, "d": 123456.789},
    "floats that are not finite": {"nan": float("nan"), "inf": float("inf")},
    "a list": {"finish_reasons": ["stop"], "tool": "echo"},
    "an enum value": {"outcome": ToolOutcome.SUCCESS},
    "quotes, escapes and unicode": {"q": 'say "hi"\n\t\\', "u": "héllo ☃ \U0001f600"},
    "a lone surrogate": {"s": "a\ud800b"},
    "a percent sign in a key and a value": {"100%": "50% %s %(x)s", "%d": 1},
    "a field that every line ends with": {"event": "mine", "n": 1},
    "the time as a field": {"timestamp": "not a time"},
    "a key that is not a string": {1: "one"},
    "nothing": {},
}
"""Own lines the renderer writes, and lines it leaves to the chain; every one must come out
as the chain writes it."""


def writer_and_chain(redactor: Redactor | None = None) -> tuple[LineWriter, LineWriter]:
    """A writer for `render_own`, and another over the same redactor for the chain's line."""
    redactor = redactor or Redactor.from_config(extra_rules=HEX_RULE)
    return (
        LineWriter(redactor=redactor, stream=io.StringIO()),
        LineWriter(redactor=redactor, stream=io.StringIO()),
    )


def chain_line(writer: LineWriter, level: int, event: str, fields: dict[Any, Any]) -> str | None:
    """The line the whole chain (`LineWriter.render`, structlog's steps) writes."""
    return writer.render(level, event, {**fields, "timestamp": WHEN})


def leaked_pieces(text: str, secret: str = SECRET, size: int = 12) -> list[str]:
    pieces = {secret[i : i + size] for i in range(len(secret) - size + 1)}
    return sorted(piece for piece in pieces if piece in text)


class TestFlatJsonRenderer:
    @pytest.mark.parametrize("fields", RECORDS.values(), ids=RECORDS.keys())
    def test_every_line_is_the_chains_line(self, fields):
        """`render_own` writes what the chain writes, byte for byte, the first time and from
        memory."""
        own, chain = writer_and_chain()
        expected = chain_line(chain, logging.INFO, "tool_call_result", fields)
        written = [
            own.render_own(logging.INFO, "tool_call_result", dict(fields), WHEN) for _ in range(2)
        ]
        assert [expected] * 2 == written

    @given(
        st.dictionaries(
            st.one_of(st.text(max_size=12), st.sampled_from(["trace_id", "span_id", "event"])),
            st.one_of(
                st.text(max_size=40),
                st.sampled_from([TRACE_ID, SPAN_ID, RECEIPT, SECRET, "api_key", "edit_file"]),
                st.integers(),
                st.floats(),
                st.booleans(),
                st.none(),
                st.lists(st.integers(), max_size=2),
            ),
            max_size=8,
        ),
        st.sampled_from([logging.INFO, logging.WARNING, 25]),
        st.sampled_from(["tool_call_start", "turn_end", SECRET]),
    )
    def test_any_record_is_the_chains_line(self, fields, level, event):
        """Whatever the keys, values and level, `render_own` writes the chain's line."""
        own, chain = writer_and_chain()
        expected = chain_line(chain, level, event, fields)
        assert [expected] * 2 == [
            own.render_own(level, event, dict(fields), WHEN) for _ in range(2)
        ]

    def test_a_secret_in_a_tool_name_or_call_id_is_redacted(self):
        """The two lines of a call whose tool name and call id hold a secret carry neither,
        even when the same fields were clean on the previous call (the memory)."""
        own, chain = writer_and_chain(Redactor())
        observer = LogObserver(own)
        correlation = Correlation(turn_id="t1", channel="cli", agent_alias="agent")
        ids = EventIds(span=(TRACE_ID, SPAN_ID))
        written: list[str | None] = []
        for cid, tool in [("c1", "echo"), (SECRET, f"echo {SECRET}")]:
            common = {"correlation": correlation, "iteration": 1, "tool_call_id": cid}
            common |= {"tool": tool, "provenance": "builtin", "arguments": "{}"}
            start = ToolCallStart(**common, time_ns=5)
            end = ToolCall(
                **common, known_tool=True, outcome=ToolOutcome.SUCCESS, success=True,
                result="done", start_time_ns=5, time_ns=9, duration_s=0.25, receipt=RECEIPT,
            )  # fmt: skip
            for level, event, fields in [
                *observer._on_tool_call_start(start, ids),
                *observer._on_tool_call(end, ids),
            ]:
                expected = chain_line(chain, level, event, fields)
                written.append(own.render_own(level, event, fields, WHEN))
                assert expected == written[-1]
        assert 4 == len(written)
        assert [] == leaked_pieces("\n".join(map(str, written)))
        assert '"tool": "echo [REDACTED:github_token]"' in str(written[-1])

    def test_an_id_is_kept_under_its_own_key_only(self):
        """A trace id kept under `trace_id` (its exact form) is still redacted under `tool`
        by an operator's rule that matches it, before and after it was remembered."""
        own, _ = writer_and_chain()
        lines = [
            own.render_own(logging.INFO, "x", {"trace_id": TRACE_ID, "tool": TRACE_ID}, WHEN)
            for _ in range(2)
        ]
        expected = f'"trace_id": "{TRACE_ID}", "tool": "[REDACTED:hex_key]"'
        assert [True, True] == [expected in str(line) for line in lines]

    def test_a_string_that_changed_is_never_remembered(self):
        """Only strings the redactor returned unchanged are kept with their JSON."""
        renderer = FlatJsonRenderer(FlatRecordRedactor(Redactor()))
        renderer.render({"tool": f"x {SECRET}", "agent": "ops"}, iso_utc(WHEN), "e", "info")
        remembered = "\n".join([*renderer._texts, *renderer._texts.values()])
        assert ("ops" in remembered, []) == (True, leaked_pieces(remembered))

    def test_the_memories_are_bounded(self):
        """However many distinct strings and key sets, the memories hold at most their
        bounds; an id validated under its key is remembered within `max_ids`."""
        records = FlatRecordRedactor(Redactor(), verbatim=RUNTIME_IDS, max_ids=3)
        renderer = FlatJsonRenderer(records, max_texts=4, max_layouts=2, max_text_length=8)
        stamp = iso_utc(WHEN)
        for n in range(20):
            trace_id = f"{n:032x}"
            fields = {"trace_id": trace_id, f"k{n % 5}": f"v{n}", "long": "x" * 9}
            renderer.render(fields, stamp, "e", "info")
            assert len(renderer._texts) <= 4 and len(renderer._layouts) <= 2
            assert len(records._ids["trace_id"]) <= 3
        assert "x" * 9 not in renderer._texts

    def test_a_line_it_cannot_write_is_left_to_the_chain(self):
        """A container, a long integer, a float that is not finite or a key set that is not
        read field by field gives None: `render_own` then runs the chain's steps."""
        renderer = FlatJsonRenderer(FlatRecordRedactor(Redactor()))
        stamp = iso_utc(WHEN)
        left = [
            {"reasons": ["stop"]},
            {"number": 4111111111111111},
            {"ms": float("inf")},
            {"password": "hunter2hunter2"},
            {"event": "mine"},
            {"outcome": ToolOutcome.SUCCESS},
        ]
        assert [None] * len(left) == [renderer.render(f, stamp, "e", "info") for f in left]
        assert renderer.render({"n": 1}, stamp, "e", "info") is not None
