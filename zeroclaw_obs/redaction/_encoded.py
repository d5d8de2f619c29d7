"""Encoded secrets: base64 and URL-encoded text is decoded and scanned again.

Two rules of the chain look *inside* encodings with the same scanner, one level deeper:

- `EncodedSecretRule` (`encoded_secret`): a base64 or base64url run that decodes to printable
  text in which a *secret* rule fires (personal data alone does not count) is replaced
  whole, under the dedicated id `encoded_secret`: the inner rule's span cannot be mapped to
  characters of the encoding, and the id tells the reader the secret was encoded. Binary
  blobs (images, compressed data, digests, keys) never decode to printable text and are
  kept.
- `PercentEncodedRule`: a run of URL-encoded text is percent-decoded with a map from each
  decoded character back to its encoded form, and every rule runs on the decoded text. Each
  inner match is replaced in place, under the inner rule's own id, so
  `password%3Dhunter2%26user%3Dbob` becomes `password%3D[REDACTED:key_value]%26user%3Dbob`.

Risky part: recursion. Each decoding adds one to the depth, and neither rule runs at
`MAX_DECODE_DEPTH`, so a base64 of a base64 of … costs at most that many linear passes.
"""

from __future__ import annotations

from ._scanner import Candidate, View, compile_pattern
from ._spec import run_start
from ._validators import decode_base64_text

__all__ = ["MAX_DECODE_DEPTH", "EncodedSecretRule", "PercentEncodedRule", "percent_decode"]

MAX_DECODE_DEPTH = 2
"""Decodings nested deeper than this are not opened."""

_HEX = frozenset("0123456789abcdefABCDEF")
_LINE_BREAK = compile_pattern(r"\r?\n|\\n")


class EncodedSecretRule:
    """Replaces a base64/base64url run whose decoded text holds a secret (`encoded_secret`).

    Sits after the token and key rules, so a JWT, a Basic credential or a value under a
    `password` key keeps its more specific name, and before the personal-data rules.
    """

    rule_id = "encoded_secret"
    reports = True
    description = "base64 or base64url text that decodes to text containing a secret"
    # Base64 of printable ASCII starts every 4-character group with one of `I-Z a-f`
    # (the top six bits of a byte 0x20–0x7E): a cheap shape that UUIDs and hex ids lack.
    # `find` checks it on the first 20 characters of a run (`_PLAUSIBLE`), so the trigger
    # asks for it there too, where a run starts (`run_start`). Anchored so, the automaton
    # follows one place in one run at a time (a digest or an id whose groups happen to fit
    # somewhere inside no longer trips it), and it is cheap enough to join the gate's set
    # of every trigger (see `_gate`).
    trigger = run_start("A-Za-z0-9+/_-") + r"(?:[CDI-Za-f][A-Za-z0-9+/_-]{3}){5}"
    gated_alone = True
    """Its counted run is searched on its own in the gate's split sets (long texts and inner
    scans), not in one of them (see `Scanner`)."""
    pii = False

    def __init__(self, priority: int) -> None:
        self.priority = priority
        # One run, or lines wrapped at a fixed width (`base64 -w 60`, MIME, JSON-escaped `\\n`).
        # The whole match, no groups: a blob can be long, and RE2 keeps its DFA only
        # without captures. A match starts its run (leftmost), so no boundary is needed.
        self._regex = compile_pattern(
            r"[A-Za-z0-9+/_-]{20,}(?:(?:\r?\n|\\n)[A-Za-z0-9+/_-]{4,})*={0,2}"
        )

    def find(self, view: View) -> list[Candidate]:
        """Candidates for base64 runs that decode to text a secret rule fires on."""
        if view.depth >= MAX_DECODE_DEPTH:
            return []
        found: list[Candidate] = []
        text = view.text
        for spans in view.matches(self._regex):
            start, end = spans[0]
            if not _PLAUSIBLE.issuperset(text[start : start + 20 : 4]):
                continue
            end, decoded = _unwrap(view.text, start, end)
            if decoded is not None and view.scanner.scan(decoded, depth=view.depth + 1, pii=False):
                found.append((start, end, self.priority, self.rule_id))
        return found


# The first character of every 4-character group of base64 of text (bytes 0x20–0x7E, tab,
# newline) encodes a byte's top six bits, 2–3 or 8–31: one of these. Hex digests, UUIDs and
# most identifiers fail on the first few groups, before any decoding.
_PLAUSIBLE = frozenset("CDIJKLMNOPQRSTUVWXYZabcdef")


def _unwrap(text: str, start: int, end: int) -> tuple[int, str | None]:
    """Decode the base64 at `text[start:end]`, joining lines wrapped at one width.

    Lines after the first belong to the blob while they have the first line's width (the
    last may be shorter); a following line of another width is some other text. Returns the
    end of the blob and its decoded text (None when it is not printable text).
    """
    lines: list[tuple[int, int]] = []
    at = start
    blob = text[start:end]
    if "\n" in blob or "\\" in blob:
        # On the slice, not on `text` with bounds: RE2's wrapper re-encodes a whole `str`
        # at every call, which per candidate would make a long non-ASCII text quadratic.
        for brk in _LINE_BREAK.finditer(blob):
            lines.append((at, start + brk.start()))
            at = start + brk.end()
    lines.append((at, end))
    width = lines[0][1] - lines[0][0]
    kept = 1
    while kept < len(lines):
        size = lines[kept][1] - lines[kept][0]
        if size > width or (size < width and kept + 1 < len(lines)):
            break
        kept += 1
        if size < width:
            break
    stop = lines[kept - 1][1]
    joined = "".join(text[a:b] for a, b in lines[:kept])
    decoded = decode_base64_text(joined)
    if decoded is None and kept > 1:
        stop, decoded = lines[0][1], decode_base64_text(text[lines[0][0] : lines[0][1]])
    return stop, decoded


def percent_decode(text: str) -> tuple[str, list[int]]:
    """Decode `%XX` escapes one byte to one character, with a map back to `text`.

    Returns:
        The decoded text and `starts`, where `starts[i]` is the offset in `text` at which
        decoded character `i` begins (`starts[len(decoded)] == len(text)`). Non-ASCII bytes
        decode as Latin-1: the secrets and key names this looks for are ASCII.
    """
    pieces = text.split("%")
    out = [pieces[0]]
    starts = list(range(len(pieces[0])))
    at = len(pieces[0])
    for piece in pieces[1:]:
        if len(piece) >= 2 and _HEX.issuperset(piece[:2]):
            out += [chr(int(piece[:2], 16)), piece[2:]]
            starts.append(at)
            starts.extend(range(at + 3, at + 1 + len(piece)))
        else:
            out += ["%", piece]
            starts.extend(range(at, at + 1 + len(piece)))
        at += 1 + len(piece)
    starts.append(len(text))
    return "".join(out), starts


class PercentEncodedRule:
    """Finds secrets inside URL-encoded text and replaces them in place, under their own ids.

    Sits after `EncodedSecretRule`; its candidates carry the inner rule's priority, so they
    are resolved against plain-text matches exactly as if the text had not been encoded.
    """

    rule_id = "url_encoded"
    reports = False
    """Its candidates carry the inner rules' ids; `url_encoded` itself is never reported."""
    description = "secrets and personal data inside URL-encoded (%XX) text, under their own ids"
    trigger = r"%[0-9A-Fa-f]{2}"
    pii = False

    def __init__(self, priority: int) -> None:
        self.priority = priority
        self._regex = compile_pattern(r"([^\s\"'<>]*%[0-9A-Fa-f]{2}[^\s\"'<>]*)")

    def find(self, view: View) -> list[Candidate]:
        """Inner candidates of each URL-encoded run, mapped back to the encoded text."""
        if view.depth >= MAX_DECODE_DEPTH:
            return []
        found: list[Candidate] = []
        for spans in view.matches(self._regex):
            start, end = spans[1]
            decoded, starts = percent_decode(view.text[start:end])
            inner = view.scanner.scan(decoded, depth=view.depth + 1, pii=view.pii)
            found.extend(
                (start + starts[s], start + starts[e], priority, rule_id)
                for s, e, priority, rule_id in inner
            )
        return found
