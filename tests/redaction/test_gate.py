"""The RE2 gate (`Scanner.gate`) answers exactly what each rule's trigger says on its own.

The gate reads a text through several sets (one of every trigger for a short text, split
sets for a long one, and a search of its own for a trigger marked `gated_alone`); however
it is split, it must list exactly the rules whose trigger matches somewhere in the text.
The reference here searches every trigger on its own.
"""

from __future__ import annotations

import pytest

from tests.redaction import heldout
from tests.redaction.corpus import mixed_payload
from zeroclaw_obs.redaction import Redactor
from zeroclaw_obs.redaction._scanner import _LONG, _MARKER_TRIGGER, compile_pattern

REDACTORS = {
    "default": Redactor,
    "operator rules, no personal data": lambda: Redactor.from_config(
        extra_rules={"acme_token": r"acme_(?P<secret>[a-z0-9]{12})", "ticket": r"TCK-[0-9]{6}"},
        pii=False,
    ),
}


def _texts() -> list[str]:
    dense = heldout.dense_payload(3, 150_000)
    clean = mixed_payload(3, 60_000)[0]
    joined = ["\n".join(clean[i : i + 6]) for i in range(0, 120, 6)]
    marked = [
        "password=[REDACTED:key_value] and token: [REDACTED:github_token] " + "x" * 300,
        "acme_0123456789ab TCK-123456 zc-receipt-1-" + "A" * 43,
    ]
    return dense + clean + joined + marked


TEXTS = _texts()


@pytest.mark.parametrize("name", list(REDACTORS))
def test_gate_lists_exactly_the_rules_whose_trigger_matches(name: str) -> None:
    """Short and long texts, clean and secret-dense, with markers: the gate's answer (and the
    inner scans' gate's) is the set of rules whose own trigger matches, plus the marker entry
    when a marker is there."""
    scanner = REDACTORS[name]()._scanner
    triggers = [compile_pattern(rule.trigger) for rule in scanner.rules]
    triggers.append(compile_pattern(_MARKER_TRIGGER))
    assert any(len(t.encode()) >= _LONG for t in TEXTS)
    assert any(len(t.encode()) < _LONG for t in TEXTS)
    for text in TEXTS:
        data = text.encode()
        expected = {i for i, trigger in enumerate(triggers) if trigger.search(data) is not None}
        got = scanner.gate(data)
        inner = scanner._inner_gate(data)

        assert sorted(got) == sorted(expected)
        assert len(got) == len(set(got))
        assert sorted(inner) == sorted(expected)
        assert len(inner) == len(set(inner))
