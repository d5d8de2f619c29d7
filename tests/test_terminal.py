"""Text bound for a terminal: controls shown as escapes; any string written as UTF-8."""

from __future__ import annotations

import io
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zeroclaw_obs._terminal import (
    ENCODING,
    ENCODING_ERRORS,
    encodable,
    printable,
    survive_any_text,
)

# What a model or a tool can put in a name, an argument or an answer to act on a terminal.
CONTROLS = {
    "\x1b[2J": "\\x1b[2J",  # clear the screen
    "\x1b]8;;https://evil.example\x07ok\x1b]8;;\x07": "\\x1b]8;;https://evil.example\\x07ok"
    "\\x1b]8;;\\x07",  # an OSC 8 link
    "\x9b31m": "\\x9b31m",  # a C1 CSI
    "safe\rEVIL": "safe\\rEVIL",  # a carriage return that overwrites the line
    "\u202egnp.exe": "\\u202egnp.exe",  # right-to-left override
    "a\u2066b\u2069": "a\\u2066b\\u2069",  # bidi isolates
    "\u200f\u061c": "\\u200f\\u061c",  # bidi marks
    "lone \ud800": "lone \\ud800",  # a lone surrogate, which no terminal can print
}


class TestPrintable:
    @pytest.mark.parametrize(("text", "expected"), list(CONTROLS.items()))
    def test_controls_are_shown_as_escapes(self, text, expected):
        """Escape sequences, bidi controls and lone surrogates are shown, never obeyed."""
        assert expected == printable(text)

    def test_plain_text_is_unchanged(self):
        """Printable text, non-ASCII and emoji included, passes as it is."""
        text = "18C, clear ⏳ ✅ 東京 😀"
        assert text == printable(text)

    def test_line_breaks_are_kept_on_request(self):
        """`keep_lines` keeps `\\n` and `\\t` (a multi-line answer) and still escapes `\\r`."""
        assert "a\n\tb\\rc\\x1b[2J" == printable("a\n\tb\rc\x1b[2J", keep_lines=True)
        assert "a\\n\\tb" == printable("a\n\tb")

    @given(st.text())
    def test_the_result_has_no_control_left(self, text):
        """Whatever the input, the result has no Cc character, no bidi control, no surrogate."""
        shown = printable(text)
        assert all(not (c < " " or "\x7f" <= c <= "\x9f") for c in shown)
        assert not any(c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069" for c in shown)
        shown.encode("utf-8")


class TestEncoding:
    @given(st.text())
    def test_any_string_encodes_and_json_reads_it_back(self, text):
        """With `backslashreplace` any string encodes as UTF-8, and in a JSON string the
        surrogate's `\\udXXX` is JSON's own escape: the reader gets the same string back."""
        line = json.dumps({"v": text + "\ud800"}, ensure_ascii=False)
        data = line.encode(ENCODING, ENCODING_ERRORS)
        assert text + "\ud800" == json.loads(data.decode("utf-8"))["v"]

    def test_encodable_escapes_only_lone_surrogates(self):
        """`encodable` writes a lone surrogate as `\\udXXX` and leaves the rest as it is."""
        assert "a\\ud800b 東京" == encodable("a\ud800b 東京")
        text = "clean"
        assert text is encodable(text)

    def test_a_stream_survives_a_lone_surrogate(self):
        """A reconfigured UTF-8 stream writes a lone surrogate as `\\ud800` instead of raising."""
        raw = io.BytesIO()
        stream = io.TextIOWrapper(raw, encoding="utf-8")
        survive_any_text(stream)
        stream.write("x\ud800y")
        stream.flush()
        assert b"x\\ud800y" == raw.getvalue()
