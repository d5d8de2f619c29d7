"""`FlatRecordRedactor`: the log lines' fast path gives exactly what `redact_value` gives."""

from __future__ import annotations

import pytest

from zeroclaw_obs.redaction import RUNTIME_IDS, FlatRecordRedactor, Redactor

TOKEN = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5"


@pytest.mark.parametrize(
    "record",
    [
        {"event": "tool_call_result", "tool": "shell", "ms": 1.5, "ok": True, "n": None},
        {"event": f"token {TOKEN}", "count": 3},
        {"password": "hunter2", "user": "alice"},  # a sensitive key: the whole path
        {"name": "DB_PASSWORD", "value": "s3cr3t-value"},  # a key pair: the whole path
        {"card": 4111111111111111, "event": "paid"},  # a long integer reads as text
        {"nested": {"api_key": "abc123456789"}, "event": "x"},
    ],
)
def test_every_record_redacts_as_redact_value_does(record: dict) -> None:
    redactor = Redactor()
    flat = FlatRecordRedactor(redactor)

    assert redactor.redact_value(record) == flat.redact_record(record)
    assert redactor.redact_value(record) == flat.redact_record(record)  # the key set is known


def test_the_record_is_never_mutated_and_a_clean_one_comes_back_as_it_is() -> None:
    flat = FlatRecordRedactor(Redactor())
    dirty = {"event": f"token {TOKEN}"}
    clean = {"event": "turn_end", "outcome": "final"}

    redacted = flat.redact_record(dirty)

    assert {"event": f"token {TOKEN}"} == dirty and redacted is not dirty
    assert clean is flat.redact_record(clean)


def test_an_id_is_kept_under_its_own_key_only_and_remembered_within_the_bound() -> None:
    """A value in its field's exact form is kept under that field, from memory too, while an
    operator's rule still redacts it under any other key; at most `max_ids` are remembered."""
    redactor = Redactor.from_config(extra_rules={"hex_key": "[0-9a-f]{16,32}"})
    flat = FlatRecordRedactor(redactor, verbatim=RUNTIME_IDS, max_ids=2)
    trace_id = "0af7651916cd43dd8448eb211c80319c"
    record = {"trace_id": trace_id, "tool": trace_id, "span_id": f"{trace_id[:16]} {TOKEN}"}
    expected = {
        "trace_id": trace_id,
        "tool": "[REDACTED:hex_key]",
        "span_id": "[REDACTED:hex_key] [REDACTED:github_token]",
    }

    assert [expected] * 2 == [flat.redact_record(record) for _ in range(2)]
    assert (True, False) == (
        flat.is_generated("trace_id", trace_id),
        flat.is_generated("tool", trace_id),
    )
    for n in range(5):
        assert flat.is_generated("trace_id", f"{n:032x}")
        assert len(flat._ids["trace_id"]) <= 2  # the bound
