"""A seeded, black-box corpus for the redactor: secrets it must remove, look-alikes it must keep.

Written from the redaction specification alone, as an auditor would: nothing here reads the
redactor's rules, and this module imports nothing of zeroclaw-obs, so tests and the benchmark
share one corpus (`from tests.redaction.corpus import generate, mixed_payload, caught, kept`).

Every secret is generated at run time with the alphabet, length and checksum of its format
(Luhn cards, mod-97 IBANs, base64url JWTs, DER-prefixed PEM bodies, ...), so no real credential
is ever stored in the repository and secret scanners have nothing to flag here.

Risky parts:
- A case is only evidence if it is right. The self-checks in `test_corpus.py` pin what can be
  checked mechanically (the secret is in the payload, look-alikes share no 12-character piece
  with a secret, checksums hold); the judgement that a look-alike is *not* a secret is ours, and
  each keep kind says why in its generator's docstring.
- `caught` is deliberately strict: any 12-character piece of a secret left in the output is a
  leak. A secret is therefore only the secret part (a URL's password, not its host).
- `score` is the one scorer for this corpus and the held-out set (`heldout.py`), in tests and
  in `make bench`: recall (`gone`: not present whole), strict recall (`strictly_gone`: no
  `STRICT_PIECE`-character piece left either) and look-alikes lost, per kind.
- Determinism rests on `random.Random(str)` seeding (SHA-512 of the string), which does not
  depend on `PYTHONHASHSEED`; do not seed from `hash()`.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

# isort: off
# Each module registers its kinds when imported; this order is the corpus's order.
from . import keys  # noqa: F401
from . import providers  # noqa: F401
from . import generic  # noqa: F401
from . import encoded  # noqa: F401
from . import pii  # noqa: F401
from . import families  # noqa: F401
from . import lookalikes  # noqa: F401

# isort: on
from ._blocks import (
    _GENERATORS,
    Case,
    _ts,
    iban_ok,
    luhn_ok,
)
from .encoded import _clean_line

__all__ = [
    "DETECT_KINDS",
    "KEEP_KINDS",
    "KINDS",
    "PII_KINDS",
    "STRICT_PIECE",
    "Case",
    "Score",
    "caught",
    "generate",
    "gone",
    "iban_ok",
    "kept",
    "luhn_ok",
    "mixed_payload",
    "score",
    "score_case",
    "strictly_gone",
    "total",
]

# --------------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------------

KINDS: tuple[str, ...] = tuple(_GENERATORS)
"""Every kind, detect kinds first, then PII kinds, then `keep_*` kinds."""
KEEP_KINDS: tuple[str, ...] = tuple(k for k in KINDS if k.startswith("keep_"))
"""Kinds whose cases carry only look-alikes."""
PII_KINDS: tuple[str, ...] = tuple(k for k in KINDS if k.startswith("pii_"))
"""Personal-data kinds: their secrets stay when PII redaction is off."""
DETECT_KINDS: tuple[str, ...] = tuple(k for k in KINDS if k not in KEEP_KINDS)
"""Kinds whose cases carry secrets (PII kinds included)."""


def generate(seed: int = 0, per_kind: int = 10) -> list[Case]:
    """The corpus: `per_kind` cases of every kind in `KINDS` order, the same for the same seed.

    Each kind draws from its own `random.Random(f"{seed}:{kind}")`, so adding a kind or
    changing one generator leaves every other kind's cases as they were.
    """
    cases: list[Case] = []
    for kind, make in _GENERATORS.items():
        rng = random.Random(f"{seed}:{kind}")
        cases.extend(make(rng, i) for i in range(per_kind))
    return cases


def _strings(v: Any) -> Iterator[str]:
    if isinstance(v, str):
        yield v
    elif isinstance(v, dict):
        for k, item in v.items():
            if isinstance(k, str):
                yield k
            yield from _strings(item)
    elif isinstance(v, list | tuple):
        for item in v:
            yield from _strings(item)


def _haystack(output: Any) -> str:
    if isinstance(output, str):
        return output
    return "\x00".join([json.dumps(output, ensure_ascii=False, default=str), *_strings(output)])


def caught(secret: str, output: Any) -> bool:
    """True when `secret` is gone from `output`: no piece of min(12, len) characters remains.

    Structured outputs are searched as `json.dumps(output, ensure_ascii=False)` and as their
    raw string keys and values, so an escaped and an unescaped leak both count.
    """
    hay = _haystack(output)
    width = min(12, len(secret))
    return not any(secret[k : k + width] in hay for k in range(len(secret) - width + 1))


def kept(lookalike: str, output: Any) -> bool:
    """True when `lookalike` survives verbatim in `output` (searched as in `caught`)."""
    return lookalike in _haystack(output)


# --------------------------------------------------------------------------------------------
# Scoring (one scorer for this corpus and the held-out set, tests and `make bench` alike)
# --------------------------------------------------------------------------------------------

STRICT_PIECE = 16
"""Strict recall counts a secret of this many characters or more as leaked while any piece of
this length is left; shorter secrets are judged whole."""


def gone(secret: str, output: Any) -> bool:
    """True when `secret` no longer appears whole in `output` (searched as in `caught`)."""
    return secret not in _haystack(output)


def strictly_gone(secret: str, output: Any) -> bool:
    """True when `secret` is gone and, if it is long, no `STRICT_PIECE`-character piece is left."""
    hay = _haystack(output)
    if secret in hay:
        return False
    w = STRICT_PIECE
    return len(secret) < w or not any(secret[k : k + w] in hay for k in range(len(secret) - w + 1))


@dataclass
class Score:
    """What one redactor did to a family's cases (or a whole set's): the counts behind the rates."""

    secrets: int = 0
    recalled: int = 0
    """Secrets no longer present whole (`gone`)."""
    strict: int = 0
    """Secrets with no long piece left either (`strictly_gone`)."""
    lookalikes: int = 0
    lost: int = 0
    """Look-alikes that did not survive verbatim."""
    errors: int = 0
    """Cases on which the redactor raised (scored as if it had returned the payload unchanged)."""

    @property
    def recall(self) -> float:
        return self.recalled / self.secrets if self.secrets else 1.0

    @property
    def strict_recall(self) -> float:
        return self.strict / self.secrets if self.secrets else 1.0

    @property
    def lost_share(self) -> float:
        return self.lost / self.lookalikes if self.lookalikes else 0.0

    def __iadd__(self, other: Score) -> Score:
        for name in ("secrets", "recalled", "strict", "lookalikes", "lost", "errors"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        return self


def score_case(case: Case, output: Any) -> Score:
    """The counts for one case given what the redactor returned for its payload."""
    return Score(
        secrets=len(case.secrets),
        recalled=sum(gone(s, output) for s in case.secrets),
        strict=sum(strictly_gone(s, output) for s in case.secrets),
        lookalikes=len(case.keep),
        lost=sum(not kept(k, output) for k in case.keep),
    )


def score(cases: list[Case], redact: Callable[[Any], Any]) -> dict[str, Score]:
    """Per-kind (per-family) scores of `redact` over `cases`, in first-seen order of kinds.

    `redact` takes a payload (text or JSON-like value) and returns the redacted output. Add the
    values up for the whole set (`total(...)`).
    """
    by_kind: dict[str, Score] = {}
    for case in cases:
        try:
            output = redact(case.payload)
            failed = 0
        except Exception:  # a crash is a finding to count, not a reason to stop
            output, failed = case.payload, 1
        result = score_case(case, output)
        result.errors = failed
        by_kind.setdefault(case.kind, Score()).__iadd__(result)
    return by_kind


def total(scores: dict[str, Score]) -> Score:
    """The sum of per-kind scores."""
    result = Score()
    for part in scores.values():
        result += part
    return result


def mixed_payload(seed: int, size_bytes: int) -> tuple[list[str], list[Case]]:
    """Log records of about `size_bytes` in all, most clean and ~3% carrying a corpus secret.

    Returns the lines and, for every line that carries secrets, a `Case` whose payload is that
    line (structured cases are embedded as their one-line JSON). Lines hold no newline, so a
    benchmark can treat each as one record.
    """
    rng = random.Random(f"mixed:{seed}")
    pool: list[Case] = []
    for case in generate(seed, per_kind=3):
        if case.kind in KEEP_KINDS or case.kind == "long_log":
            continue
        line = (
            case.payload
            if isinstance(case.payload, str)
            else json.dumps(case.payload, ensure_ascii=False)
        )
        if "\n" in line or "\r" in line or len(line) > 4000:
            continue
        if all(not caught(s, line) for s in case.secrets[:1]) and all(k in line for k in case.keep):
            pool.append(replace(case, payload=line))
    lines: list[str] = []
    carried: list[Case] = []
    size = 0
    while size < size_bytes:
        if rng.random() < 0.03:
            case = rng.choice(pool)
            line = f"{_ts(rng)} INFO  tool_result {case.payload}"
            carried.append(replace(case, payload=line))
        else:
            line, _ = _clean_line(rng)
        lines.append(line)
        size += len(line.encode()) + 1
    return lines, carried
