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
from zeroclaw_obs.redaction._scanner import (
    _LONG,
    _MARKER_TRIGGER,
    _PREFILTER_BELOW,
    Scanner,
    compile_pattern,
)

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
    assert scanner.short_below == _LONG
    for text in TEXTS:
        data = text.encode()
        expected = {i for i, trigger in enumerate(triggers) if trigger.search(data) is not None}
        got = scanner.gate(data)
        inner = scanner._inner_gate(data)

        assert sorted(got) == sorted(expected)
        assert len(got) == len(set(got))
        assert sorted(inner) == sorted(expected)
        assert len(inner) == len(set(inner))
        if len(data) < scanner.short_below:  # what `redact_text` asks for a short text
            assert sorted(scanner.short_gate(data)) == sorted(expected)


_WORDS = [
    "request",
    "body",
    "buffer",
    "config",
    "value",
    "result",
    "module",
    "parse",
    "render",
    "update",
    "client",
]


def _clean_long(k: int) -> str:
    """Code-like lines of plain words (~600 bytes) that trip no trigger, different per `k`."""
    lines = []
    for j in range(16):
        a, b, c = (_WORDS[(k * 7 + j * n) % len(_WORDS)] for n in (1, 3, 5))
        lines.append(f"    {a}_{b} = {c}.{b}({a}, {c}_{a})\n")
    return "".join(lines)


def _tripped(scanner: Scanner) -> float:
    """The gate's moving share of long texts that tripped it (its closure's `tripped`)."""
    cells = dict(
        zip(scanner.gate.__code__.co_freevars, scanner.gate.__closure__ or (), strict=True)
    )
    return float(cells["tripped"].cell_contents[0])


@pytest.mark.parametrize("name", list(REDACTORS))
def test_prefiltered_gate_answers_as_the_split_sets(name: str) -> None:
    """After clean long texts the gate reads a long text by one search for any trigger first
    (`_PREFILTER_BELOW`); every text, one with a secret among clean ones and a dense run
    included, gets exactly the split sets' answer, in both regimes."""
    scanner = REDACTORS[name]()._scanner
    long_texts = [t for t in TEXTS if len(t.encode()) >= _LONG]
    prefiltered = 0
    for k, text in enumerate(long_texts):
        for i in range(8):  # clean ones: the share falls below the threshold
            clean = _clean_long(k * 8 + i).encode()
            assert scanner.gate(clean) == [] == scanner._inner_gate(clean)
        prefiltered += _tripped(scanner) < _PREFILTER_BELOW
        for variant in (text, _clean_long(k) + text, text + _clean_long(k)):
            data = variant.encode()
            assert sorted(scanner.gate(data)) == sorted(scanner._inner_gate(data))
    assert prefiltered == len(long_texts)
    for text in long_texts:  # dense in a row: the split sets alone
        data = text.encode()
        assert sorted(scanner.gate(data)) == sorted(scanner._inner_gate(data))
    assert _tripped(scanner) > _PREFILTER_BELOW
    for k in range(20):  # clean again: the prefilter comes back, and shuts them out
        clean = _clean_long(1000 + k).encode()
        assert scanner.gate(clean) == [] == scanner._inner_gate(clean)
    assert _tripped(scanner) < _PREFILTER_BELOW


_RUN_START_VALUES = [
    "4111 1111 1111 1111",
    "4111111111111111",
    "4111-1111-1111-1111",
    "555 123 4567",
    "1-555-123-4567",
    "(555) 123-4567",
    "1 (555) 123-4567",
    "06 12 34 56 78",
    "06.12.34.56.78",
    "07700 900123",
    "cGFzc3dvcmQ9WnE4V3g3VmM2Qm41TWw0SyBhbmQgbW9yZQ==",
]
"""Cards, North-American phone numbers and a base64 secret: rules whose triggers start where
a run starts (`_spec.run_start`), not anywhere their pattern could."""
_NEIGHBOURS = [
    "",
    " ",
    "x",
    "9",
    "-",
    ".",
    "/",
    "_",
    "+",
    ",",
    "=",
    "\n",
    "\0",
    "é",
    "(",
    "1 ",
    "[REDACTED:email]",
    "zc-receipt-1-" + "C" * 43,
    "zc-receipt-12-" + "_" * 43,
    "zc-receipt-1-" + "C" * 42,
]


@pytest.mark.parametrize("name", list(REDACTORS))
def test_triggers_at_run_starts_skip_only_what_the_rules_refuse(name: str) -> None:
    """A value after every kind of neighbour (a run's own character, a boundary, a marker, a
    receipt, which the scan blanks out so a run starts right after it): the gated scan finds
    exactly what running every rule finds, and the values after a receipt are found."""
    scanner = REDACTORS[name]()._scanner
    for value in _RUN_START_VALUES:
        for before in _NEIGHBOURS:
            for after in ("", " ", "x", "9", "-"):
                text = before + value + after
                assert scanner.scan(text, ungated=True) == scanner.scan(text), repr(text)
    receipt = "zc-receipt-1-" + "C" * 43
    found = Redactor()._scanner.scan(
        receipt + "4111111111111111 " + receipt + "555 123 4567 " + receipt + "07700 900123"
    )
    assert ["payment_card", "phone_number", "phone_number"] == [r_id for *_, r_id in found]
