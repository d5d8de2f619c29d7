"""The blind set (`blind.py`) is well-formed evidence.

Nothing here asserts the redactor's score on the blind set: that figure is reported by
`make bench` (benchmarks/redaction.py) beside the corpus and the held-out set. These tests only
check that every case means what it says: its marked secrets and look-alikes are in its payload,
no look-alike carries a piece of a secret, checksummed formats hold their checksums, the set is
the same for the same seed in any process, and every family has cases.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import subprocess
import sys
import zlib
from pathlib import Path

from tests.redaction.blind import (
    FAMILIES,
    KEEP_FAMILIES,
    PII_FAMILIES,
    generate,
    iban_valid,
    luhn_valid,
)
from tests.redaction.corpus import STRICT_PIECE, Case, iban_ok, kept, luhn_ok, score, total

_REPO = Path(__file__).resolve().parents[2]
_PER_FAMILY = 8


@functools.cache
def _cases() -> tuple[Case, ...]:
    return tuple(generate(seed=0, per_family=_PER_FAMILY))


def _where(case: Case) -> str:
    return f"{case.kind} (payload of {len(json.dumps(case.payload))} chars)"


def _digest(cases: list[Case]) -> str:
    text = json.dumps(
        [[c.kind, c.payload, list(c.secrets), list(c.keep), c.pii] for c in cases],
        ensure_ascii=False,
        sort_keys=True,
    )
    return hashlib.sha256(text.encode()).hexdigest()


class TestShape:
    def test_meets_the_floors(self) -> None:
        cases = _cases()
        assert len(FAMILIES) >= 40
        assert len(cases) >= 400
        assert sum(len(c.secrets) for c in cases) >= 600
        assert sum(len(c.keep) for c in cases) >= 1000

    def test_every_family_has_its_cases(self) -> None:
        by_family: dict[str, list[Case]] = {}
        for case in _cases():
            by_family.setdefault(case.kind, []).append(case)
        assert list(by_family) == list(FAMILIES)
        for family, cases in by_family.items():
            assert len(cases) == _PER_FAMILY, family
            if family in KEEP_FAMILIES:
                assert all(not c.secrets and c.keep for c in cases), family
            else:
                assert all(c.secrets for c in cases), family
            assert all(c.pii == (family in PII_FAMILIES) for c in cases), family

    def test_family_names_say_what_they_hold(self) -> None:
        assert all(f.startswith("pii_") for f in PII_FAMILIES)
        assert PII_FAMILIES and KEEP_FAMILIES
        assert not set(PII_FAMILIES) & set(KEEP_FAMILIES)

    def test_structured_payloads_are_json_values(self) -> None:
        structured = [c for c in _cases() if not isinstance(c.payload, str)]
        assert structured, "some cases must exercise redact_value"
        for case in structured:
            assert json.loads(json.dumps(case.payload)) == case.payload, _where(case)


class TestMarks:
    def test_every_marked_span_is_in_its_payload(self) -> None:
        for case in _cases():
            for marked in case.secrets + case.keep:
                assert kept(marked, case.payload), f"{_where(case)}: a marked span is missing"

    def test_marks_are_long_enough_to_be_evidence(self) -> None:
        for case in _cases():
            assert all(len(s) >= 7 for s in case.secrets), _where(case)
            assert all(len(k) >= 4 for k in case.keep), _where(case)

    def test_lookalikes_hold_no_strict_piece_of_a_secret(self) -> None:
        w = STRICT_PIECE
        for case in _cases():
            for secret in case.secrets:
                pieces = {secret[i : i + w] for i in range(max(1, len(secret) - w + 1))}
                for keep in case.keep:
                    assert secret not in keep and keep not in secret, _where(case)
                    assert not any(p in keep for p in pieces), _where(case)

    def test_no_lookalike_is_personal_data_by_the_contract(self) -> None:
        """A look-alike must be something a redactor honouring the `pii` contract (email,
        Luhn-checked cards, IBAN, US SSN, phone, IP) has to keep: no email address, no IPv4
        address, no card-brand Luhn-valid number between non-alphanumerics."""
        email = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}")
        ipv4 = re.compile(r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?![\d.])")
        card = re.compile(r"(?<![0-9A-Za-z])[2-6]\d(?:[ -]?\d){11,17}(?![0-9A-Za-z])")
        for case in _cases():
            for keep in case.keep:
                assert not email.search(keep), _where(case)
                for m in ipv4.finditer(keep):
                    assert not all(int(x) < 256 for x in m.group(0).split(".")), _where(case)
                for m in card.finditer(keep):
                    assert not luhn_valid(m.group(0)), _where(case)

    def test_secrets_and_lookalikes_are_distinct_within_a_case(self) -> None:
        for case in _cases():
            assert len(set(case.secrets)) == len(case.secrets), _where(case)
            assert len(set(case.keep)) == len(case.keep), _where(case)


class TestFormats:
    def test_cards_hold_luhn_and_agree_with_the_corpus_checker(self) -> None:
        cards = [s for c in _cases() for s in c.secrets if re.fullmatch(r"[\d -]{14,23}", s)]
        cards = [s for s in cards if len(re.sub(r"\D", "", s)) >= 14]
        assert len(cards) >= 8
        for card in cards:
            assert luhn_valid(card)
            assert luhn_ok(re.sub(r"\D", "", card))

    def test_order_numbers_beside_cards_fail_luhn(self) -> None:
        numbers = [
            k
            for c in _cases()
            if c.kind == "pii_cards"
            for k in c.keep
            if re.fullmatch(r"\d{12,19}", k)
        ]
        assert numbers
        assert not any(luhn_valid(n) for n in numbers)

    def test_ibans_hold_mod_97(self) -> None:
        ibans = [
            s
            for c in _cases()
            for s in c.secrets
            if re.fullmatch(r"[A-Z]{2}\d{2}(?: ?[A-Z0-9]{1,4})+", s) and len(s) >= 15
        ]
        assert len(ibans) >= 8
        for iban in ibans:
            assert iban_valid(iban)
            assert iban_ok(iban.replace(" ", ""))

    def test_github_and_npm_tokens_hold_their_crc32(self) -> None:
        alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

        def crc_ok(token: str) -> bool:
            body, check = token[-36:-6], token[-6:]
            n = 0
            for ch in check:
                n = n * 62 + alphabet.index(ch)
            return n == zlib.crc32(body.encode())

        tokens = {
            m.group(0)
            for c in _cases()
            for s in c.secrets
            for m in re.finditer(r"\b(?:gh[pousr]|npm)_[A-Za-z0-9]{36}\b", s)
        }
        assert len(tokens) >= 8
        assert all(crc_ok(t) for t in tokens)


class TestSeeds:
    def test_same_seed_same_set_different_seed_different_set(self) -> None:
        assert _digest(generate(seed=0, per_family=2)) == _digest(generate(seed=0, per_family=2))
        assert _digest(generate(seed=0, per_family=2)) != _digest(generate(seed=1, per_family=2))

    def test_the_set_does_not_depend_on_the_hash_seed(self) -> None:
        code = (
            "import hashlib, json\n"
            "from tests.redaction.blind import generate\n"
            "cases = generate(seed=3, per_family=2)\n"
            "text = json.dumps([[c.kind, c.payload, list(c.secrets), list(c.keep), c.pii]"
            " for c in cases], ensure_ascii=False, sort_keys=True)\n"
            "print(hashlib.sha256(text.encode()).hexdigest())\n"
        )
        seen = set()
        for hash_seed in ("1", "2"):
            env = {**os.environ, "PYTHONHASHSEED": hash_seed}
            out = subprocess.run(
                [sys.executable, "-c", code], cwd=_REPO, env=env, capture_output=True, text=True
            )
            assert out.returncode == 0, out.stderr[-500:]
            seen.add(out.stdout.strip())
        assert seen == {_digest(generate(seed=3, per_family=2))}


class TestScoring:
    """The shared scorer reads the blind set as intended: a redactor that changes nothing
    recalls nothing and loses nothing; one that blanks everything recalls every secret and
    loses every look-alike."""

    def test_identity_recalls_nothing_and_loses_nothing(self) -> None:
        t = total(score(list(_cases()), lambda payload: payload))
        assert t.recalled == 0 and t.strict == 0 and t.lost == 0
        assert t.secrets == sum(len(c.secrets) for c in _cases())

    def test_blanking_recalls_everything_and_loses_everything(self) -> None:
        t = total(score(list(_cases()), lambda payload: ""))
        assert t.recall == 1.0 and t.strict_recall == 1.0
        assert t.lost == t.lookalikes == sum(len(c.keep) for c in _cases())
