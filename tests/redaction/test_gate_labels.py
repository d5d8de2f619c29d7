"""Every rule's trigger fires wherever its rule can find something, label forms included.

The gate (`Scanner.gate`) runs a rule only when its trigger matches, so a trigger narrower
than what its rule finds is a secret the gated scan (what `Redactor.redact_text` runs)
leaves in the text. The reference runs each rule whose trigger did not fire on its own:
it must find nothing. Texts are generated around every word the chain's patterns and
triggers spell (labels such as `telephone`, `phoneno`, `KEYS`), with the suffixes, quotes,
separators and values labels meet in logs, receipts and markers right before them.
"""

from __future__ import annotations

import random
import re

import pytest

from zeroclaw_obs.redaction import Redactor
from zeroclaw_obs.redaction._scanner import Scanner

_SUFFIXES = ["", "", "s", "S", "no", "No.", "number", "NUMBER", "num", "#", "_no", " no", "_id"]
_QUOTES = ["", "", '"', "'", '\\"', "`", "*"]
_SEPARATORS = [" ", ":", ": ", "=", " = ", "-", "_", "", "\t", "#", ". ", ", ", "\n", "(", "|"]
_BEFORE = ["zc-receipt-7-" + "b" * 43, "zc-receipt-3-" + "_" * 43, "[REDACTED:email]", "\n", "a"]


def _words(scanner: Scanner) -> list[str]:
    """The words the chain's triggers and patterns spell (labels, keywords, prefixes)."""
    words: set[str] = set()
    for rule in scanner.rules:
        sources = [rule.trigger]
        sources += [v.pattern for v in _fields(rule) if isinstance(getattr(v, "pattern", 0), str)]
        for source in sources:
            words.update(re.findall(r"[A-Za-z][A-Za-z_.#-]{1,}", source))
    return sorted(words)


def _fields(rule: object) -> list[object]:
    """A rule's attributes (its compiled patterns among them)."""
    names = getattr(rule, "__slots__", ()) or vars(rule)
    return [getattr(rule, name, None) for name in names]


def _value(rng: random.Random) -> str:
    digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(3, 19)))
    token = "".join(rng.choice("ABCDEFGHIJKabcdefghijk0123456789+/-") for _ in range(24))
    return rng.choice(
        [
            digits,
            f"555 {rng.randrange(1000):03} {rng.randrange(10000):04}",
            f"{rng.randint(100, 699)}-{rng.randint(1, 99):02}-{rng.randint(1, 9999):04}",
            f"+{rng.randint(1, 99)} {rng.randint(10**6, 10**10)}",
            f"({rng.randint(200, 999)}) {rng.randint(200, 999)}-{rng.randrange(10**4):04}",
            f"07{rng.randrange(1000):03} {rng.randrange(10**6):06}",
            token,
            token[:12] + "-\n" + token[12:],
            rng.choice(_BEFORE),
        ]
    )


def _text(rng: random.Random, words: list[str]) -> str:
    parts = [rng.choice([*_BEFORE, "", "", ""])]
    for _ in range(rng.randint(1, 3)):
        word = rng.choice(words)
        word = rng.choice([word, word.lower(), word.upper(), word.capitalize()])
        parts += [word + rng.choice(_SUFFIXES), rng.choice(_QUOTES), rng.choice(_SEPARATORS)]
        parts += [_value(rng), rng.choice(_SEPARATORS)]
    return "".join(parts)


def _missed(scanner: Scanner, text: str) -> list[str]:
    """Rules the gate left out that find something in `text` on their own."""
    n = len(scanner.rules)
    hits = set(scanner.gate(text.encode()))
    return [
        scanner.rules[i].rule_id
        for i in range(n)
        if i not in hits and scanner.scan(text, gated=[i, n])
    ]


@pytest.mark.parametrize(
    "text",
    [
        "telephone:5551234567",
        "Telephone = 020 7946 0958",
        "phonenumber: 5551234567",
        "mobileno 5551234567",
        "Cell5551234567",
        "zc-receipt-7-" + "b" * 43 + "whatsapp 5551234567",
        "KEYS: aB3dE6gH9jK2mN5pQ8sT1vW4",
        "PASSWORDS= aB3dE6gH9jK2mN5pQ8sT1vW4",
        "ghp_aB3dE6gH9jK2mN5p-\nQ8sT1vW4yZ7bC0eF3hJ6",
    ],
)
def test_label_forms_trip_their_rules(text: str) -> None:
    """Forms the phone label, generic-secret and wrapped-token patterns read, which their
    triggers missed: the gated scan finds what running every rule finds."""
    scanner = Redactor()._scanner
    assert scanner.scan(text, ungated=True) == scanner.scan(text)
    assert [] == _missed(scanner, text)


@pytest.mark.parametrize("seed", range(4))
def test_no_rule_finds_anything_where_its_trigger_is_silent(seed: int) -> None:
    """Generated label texts: a rule the gate leaves out finds nothing there on its own."""
    scanner = Redactor()._scanner
    rng = random.Random(seed)
    words = _words(scanner)
    missed = {}
    for _ in range(1500):
        text = _text(rng, words)
        for rule_id in _missed(scanner, text):
            missed.setdefault(rule_id, text)
    assert {} == {rule_id: re.sub("[0-9]", "9", t) for rule_id, t in missed.items()}
