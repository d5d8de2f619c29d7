"""The held-out set (`heldout.py`) is well-formed, and the shared scorer counts correctly.

Nothing here asserts the redactor's recall on the held-out set: that figure is reported by
`make bench` (benchmarks/redaction.py), per family, beside the peers'. These tests only make sure
each case is sound evidence, so that a figure computed on it means what it says.
"""

from __future__ import annotations

import base64
import functools
import json
import re
import zlib

from tests.redaction.corpus import (
    STRICT_PIECE,
    Case,
    Score,
    _haystack,
    iban_ok,
    kept,
    luhn_ok,
    score,
    score_case,
    strictly_gone,
    total,
)
from tests.redaction.heldout import (
    FAMILIES,
    KEEP_FAMILIES,
    PII_FAMILIES,
    dense_payload,
    generate,
)

MIN_CASES, MAX_CASES = 400, 600
MIN_FAMILIES, MIN_SECRETS, MIN_LOOKALIKES = 40, 700, 1200


@functools.cache
def _cases() -> tuple[Case, ...]:
    return tuple(generate())


def _where(index: int, case: Case) -> str:
    return f"#{index} {case.kind}"


def _outside_secrets(case: Case) -> str:
    """The case's searchable text with every secret occurrence blanked out."""
    hay = _haystack(case.payload)
    for secret in sorted(case.secrets, key=len, reverse=True):
        hay = hay.replace(secret, "\x01" * len(secret))
    return hay


class TestHeldOutSet:
    """Size, determinism and soundness of every case."""

    def test_is_deterministic(self) -> None:
        """The same seed gives the same set; another seed a different one."""
        assert generate(seed=3, per_family=2) == generate(seed=3, per_family=2)
        assert False is (generate(seed=4, per_family=2) == generate(seed=3, per_family=2))

    def test_meets_the_floors(self) -> None:
        """400-600 cases over 40+ families, 700+ secrets and 1,200+ look-alikes."""
        cases = _cases()
        secrets = sum(len(c.secrets) for c in cases)
        lookalikes = sum(len(c.keep) for c in cases)
        figures = (len(cases), len(FAMILIES), secrets, lookalikes)
        assert (True, True, True, True) == (
            MIN_CASES <= len(cases) <= MAX_CASES,
            len(FAMILIES) >= MIN_FAMILIES,
            secrets >= MIN_SECRETS,
            lookalikes >= MIN_LOOKALIKES,
        ), figures

    def test_every_family_is_populated(self) -> None:
        """Each family has cases; secret families carry secrets, `keep_*` families none."""
        cases = _cases()
        problems = [f for f in FAMILIES if not any(c.kind == f for c in cases)]
        for index, case in enumerate(cases):
            if (case.kind in KEEP_FAMILIES) == bool(case.secrets):
                problems.append(f"{_where(index, case)}: secrets do not match the family")
            if not case.keep:
                problems.append(f"{_where(index, case)}: no look-alike")
            if case.pii != (case.kind in PII_FAMILIES):
                problems.append(f"{_where(index, case)}: pii flag")
        assert [] == problems
        assert set(KEEP_FAMILIES) < set(FAMILIES)
        assert [] == [f for f in FAMILIES if not re.fullmatch(r"[a-z0-9_]+", f)]

    def test_secrets_and_lookalikes_occur_in_the_payload(self) -> None:
        """Every secret occurs verbatim, every look-alike occurs outside every secret."""
        problems = []
        for index, case in enumerate(_cases()):
            hay = _haystack(case.payload)
            problems += [
                f"{_where(index, case)}: secret absent" for s in case.secrets if s not in hay
            ]
            outside = _outside_secrets(case)
            problems += [
                f"{_where(index, case)}: keep {k!r} absent" for k in case.keep if k not in outside
            ]
        assert [] == problems

    def test_lookalikes_hold_no_piece_of_a_secret(self) -> None:
        """No look-alike contains a secret, or a 16-character piece of one."""
        problems = []
        for index, case in enumerate(_cases()):
            for k in case.keep:
                if not all(strictly_gone(s, k) for s in case.secrets):
                    problems.append(
                        f"{_where(index, case)}: keep {k[:30]!r} holds a secret's piece"
                    )
        assert [] == problems

    def test_formats_hold_their_checksums(self) -> None:
        """Cards pass Luhn, IBANs mod-97, GitHub/npm tokens carry their CRC32 tail."""
        secrets = [s for c in _cases() for s in c.secrets]
        cards = [
            s
            for s in secrets
            if re.fullmatch(r"[0-9 -]+", s) and len(re.sub(r"\D", "", s)) in (15, 16)
        ]
        ibans = [s for s in secrets if re.fullmatch(r"[A-Z]{2}[0-9]{2}[A-Z0-9]{10,30}", s)]
        crc = [s for s in secrets if re.fullmatch(r"(ghp|ghs|npm)_[A-Za-z0-9]{36}", s)]

        def crc_ok(token: str) -> bool:
            body, tail = token[4:-6], token[-6:]
            alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
            n = 0
            for ch in tail:
                n = n * 62 + alphabet.index(ch)
            return n == zlib.crc32(body.encode())

        assert [] == [s[:4] for s in cards if not luhn_ok(s)]
        assert [] == [s[:4] for s in ibans if not iban_ok(s)]
        assert [] == [s[:4] for s in crc if not crc_ok(s)]
        assert (True, True, True) == (len(cards) >= 4, len(ibans) >= 3, len(crc) >= 20)

    def test_base64_carriers_decode_to_a_secret(self) -> None:
        """Each base64 carrier decodes to text that holds a credential."""
        blobs = [s for c in _cases() if c.kind == "base64_carriers" for s in c.secrets]
        decoded = [base64.b64decode(b).decode() for b in blobs]
        assert [] == [d[:8] for d in decoded if not re.search(r"[=:]", d)]

    def test_structured_cases_are_json_values(self) -> None:
        """Structured payloads are plain JSON-like values (the key-aware path can walk them)."""
        structured = [c.payload for c in _cases() if not isinstance(c.payload, str)]
        assert structured and all(json.loads(json.dumps(p)) == p for p in structured)

    def test_dense_payload_is_dense(self) -> None:
        """About size_bytes of distinct records, each a tool result or a log, deterministic."""
        records = dense_payload(2, 300_000)
        size = sum(len(r.encode()) + 1 for r in records)
        assert records == dense_payload(2, 300_000)
        assert (True, True) == (300_000 <= size < 340_000, len(set(records)) == len(records))
        assert [] == [
            r[:30] for r in records if "tool_result" not in r[:80] and '"tool_result"' not in r
        ]


class TestScorer:
    """`corpus.score` on tiny hand-made cases: what counts as recalled, strict, and lost."""

    SECRET = "Zq8Wx7Vc6Bn5Ml4KpR3tY2uI"  # 24 characters

    def _case(self, payload: str) -> Case:
        return Case("tiny", payload, (self.SECRET,), ("port=5432",))

    def test_a_secret_removed_whole_is_recalled_strictly(self) -> None:
        """Nothing left: recalled, strictly recalled, look-alike kept."""
        result = score_case(self._case(""), "pw=[REDACTED] port=5432")
        assert (1, 1, 0) == (result.recalled, result.strict, result.lost)

    def test_a_secret_partly_left_is_a_strict_miss(self) -> None:
        """A 16-character piece left: not whole, so recalled, but a strict-recall miss."""
        left = self.SECRET[-STRICT_PIECE:]
        result = score_case(self._case(""), f"pw=[REDACTED]{left} port=5432")
        assert (1, 0) == (result.recalled, result.strict)
        shorter = self.SECRET[-(STRICT_PIECE - 1) :]
        assert 1 == score_case(self._case(""), f"pw=[REDACTED]{shorter}").strict

    def test_a_secret_left_whole_is_not_recalled(self) -> None:
        """The whole secret left (here inside a longer word): neither recalled nor strict."""
        result = score_case(self._case(""), f"pw=x{self.SECRET}x port=5432")
        assert (0, 0) == (result.recalled, result.strict)

    def test_a_changed_lookalike_is_lost(self) -> None:
        """A look-alike altered in any way counts as lost."""
        assert 1 == score_case(self._case(""), "pw=[REDACTED] port=[REDACTED]").lost
        assert 1 == score_case(self._case(""), "pw=[REDACTED] port=5433").lost
        assert 0 == score_case(self._case(""), "x port=5432 y").lost

    def test_short_secrets_are_judged_whole(self) -> None:
        """A secret under 16 characters counts as strictly gone once it is not there whole."""
        case = Case("tiny", "pw=hunter2!", ("hunter2!",), ())
        assert (1, 1) == (score_case(case, "pw=hunter").recalled, score_case(case, "pw=").strict)
        assert 0 == score_case(case, "pw=hunter2!").recalled

    def test_structured_outputs_are_searched_raw_and_as_json(self) -> None:
        """A secret left in a nested value is found; a look-alike member is found as JSON."""
        case = Case("tiny", {}, (self.SECRET,), ('"port": 5432',))
        result = score_case(case, {"a": [{"b": self.SECRET}], "port": 5432})
        assert (0, 0) == (result.recalled, result.lost)

    def test_score_groups_by_family_and_totals(self) -> None:
        """Per-family counts add up; a raising redactor is counted and leaves the payload as is."""
        cases = [
            Case("one", f"key={self.SECRET} port=5432", (self.SECRET,), ("port=5432",)),
            Case("two", "port=5432 bad", (), ("port=5432",)),
        ]

        def redact(payload: str) -> str:
            if "bad" in payload:
                raise ValueError("boom")
            return payload.replace(self.SECRET, "[REDACTED]").replace("5432", "[X]")

        scores = score(cases, redact)
        assert ["one", "two"] == list(scores)
        assert Score(1, 1, 1, 1, 1, 0) == scores["one"]
        assert Score(0, 0, 0, 1, 0, 1) == scores["two"]
        whole = total(scores)
        assert (1.0, 1.0, 0.5, 1) == (
            whole.recall,
            whole.strict_recall,
            whole.lost_share,
            whole.errors,
        )
        assert True is kept("port=5432", "port=5432")
