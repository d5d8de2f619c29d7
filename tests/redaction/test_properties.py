"""Properties of `Redactor` over generated text: it never raises and redacting twice is a no-op.

The strategies mix arbitrary unicode (lone surrogates, zero-width and control characters
included) with fragments of real secret formats, personal data, PEM markers, `\\`-newline
continuations and `key=value` shapes, so the rules meet each other's edges. Runs are
derandomized and keep no example database, so CI sees the same examples every time.
"""

from __future__ import annotations

import functools
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zeroclaw_obs.redaction import Redactor

from ..builders import TEXT

KEYS = st.one_of(
    st.sampled_from(["password", "token", "api_key", "name", "value", "x_token_id", "session"]),
    TEXT,
)
VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), TEXT),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(KEYS, inner, max_size=4),
        st.tuples(inner, inner),
    ),
    max_leaves=12,
)
FUZZ = settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@functools.cache
def _redactor() -> Redactor:
    return Redactor()


class TestRedactText:
    @FUZZ
    @given(TEXT)
    def test_redact_text_is_idempotent(self, text: str) -> None:
        """`redact_text(redact_text(s)) == redact_text(s)` for any text: the second pass by a
        redactor that does not remember the first one's output, so it scans it."""
        once = _redactor().redact_text(text)

        assert once == Redactor().redact_text(once)

    @FUZZ
    @given(TEXT)
    def test_report_agrees_with_the_text(self, text: str) -> None:
        """The report's text is `redact_text`'s, and it counts one marker per replacement."""
        redacted, report = _redactor().redact_text_report(text)

        assert (redacted, True) == (
            _redactor().redact_text(text),
            sum(report.values()) <= redacted.count("[REDACTED:"),
        )


class TestRedactValue:
    @FUZZ
    @given(VALUES)
    def test_redact_value_is_idempotent(self, value: Any) -> None:
        """`redact_value(redact_value(v)) == redact_value(v)` over nested dicts, lists, strings."""
        once = _redactor().redact_value(value)

        assert once == _redactor().redact_value(once)

    @FUZZ
    @given(st.dictionaries(KEYS, VALUES, max_size=4))
    def test_sensitive_keys_are_masked_on_the_first_pass(self, value: dict[str, Any]) -> None:
        """A dict redacted once is not masked any further by a second pass."""
        once = _redactor().redact_value_report(value)[0]

        assert {} == _redactor().redact_value_report(once)[1]
