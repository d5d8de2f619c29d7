"""Streamed text as `chunk` TurnEvents: redacted increments that are safe to send one by one.

A streaming provider hands the loop raw text deltas (`ProviderRequest.on_text`). Each must
reach a client progressively, yet a secret can be split across two deltas (`gh` + `p_…`), and
redacting each delta alone would send both halves. `ChunkRedactor` keeps the raw text so far
and sends only increments of *its* redaction, cut at points where the rest of the text can no
longer change how the sent part redacts.

Risky part: redaction is not prefix-stable. A card number `4111 1111 1111 1111` is a secret
only once its last group has arrived; an unclosed `-----BEGIN … KEY-----` block swallows the
lines after it; `password = …` needs the text before it. So a piece is committed only when:

- it ends at whitespace (a token never holds whitespace, so no token is cut), at least
  `LOOKAHEAD` characters before the end of the raw text so far (the multi-word secrets, a card
  or an IBAN with spaces, a phone number, a PEM header line, fit in that window), and
- the redaction of the raw text up to that point is a prefix of the redaction of all the raw
  text so far (what arrived after it does not change it) and extends what was already sent.

Every redaction runs over the whole raw text from its start, so context before a secret (a key
name, `Authorization: Bearer`, an AWS hint) is always seen. At the end `finish` sends the rest
of the redaction of the whole text, so the chunks concatenate to `redact(text)` exactly, as
long as no rule's decision about text already sent changes because of text that arrived more
than `LOOKAHEAD` characters later (the property tests hold this over the redaction corpus);
if one ever does, `finish` sends nothing more and `diverged` is True: nothing that was sent can
be taken back, and the final answer (stdout, `turn_end`) is redacted whole anyway.

Cost: two redactions of the raw text per commit attempt, and an attempt only once the text
has grown by a sixteenth since the last one (at least `MIN_STEP` characters), so the work
stays linear in the length of the response whatever the size of its deltas.
"""

from __future__ import annotations

from collections.abc import Callable

from ..redaction import Redactor

__all__ = ["LOOKAHEAD", "MIN_STEP", "PEM_HOLD", "ChunkRedactor"]

LOOKAHEAD = 96
"""Raw characters kept back behind a commit point: the longest multi-word secret (an IBAN
written in groups is 42) with room to spare."""

PEM_HOLD = 16384
"""Raw characters of an unclosed `-----BEGIN` block held back at most (an RSA-4096 key in PEM
is about 3,300)."""

MIN_STEP = 32
"""Raw characters that must arrive before the next commit attempt (at least)."""

_WHITESPACE = (" ", "\n", "\t", "\r")
_CANDIDATES = 3
"""Whitespace cut points tried per attempt, latest first, before waiting for more text."""


class ChunkRedactor:
    """Feeds raw deltas in, sends redacted increments out through `send`. One per response.

    `feed` and `finish` run on the turn's path and never raise from redaction state; `send`
    receives non-empty strings, in order. The concatenation of everything sent is
    `redactor.redact_text(text)` of the final text (see the module docstring for the bound).

    Args:
        redactor: the runtime's one redactor.
        send: receives each redacted increment (the loop wraps it in a `chunk` TurnEvent).
        lookahead: raw characters held back behind a commit point.
    """

    __slots__ = (
        "_attempted",
        "_length",
        "_parts",
        "_raw",
        "_redact",
        "_send",
        "diverged",
        "lookahead",
        "sent",
    )

    def __init__(
        self, redactor: Redactor, send: Callable[[str], None], *, lookahead: int = LOOKAHEAD
    ) -> None:
        self._redact = redactor.redact_text
        self._send = send
        self._parts: list[str] = []
        self._raw = ""
        self._length = 0
        self._attempted = 0
        self.lookahead = lookahead
        self.sent = ""
        """Everything sent so far (redacted)."""
        self.diverged = False
        """True when the whole text redacts differently from what was already sent."""

    @property
    def raw(self) -> str:
        """The raw text fed so far."""
        if self._parts:
            self._raw += "".join(self._parts)
            self._parts.clear()
        return self._raw

    def feed(self, delta: str) -> None:
        """Take one raw delta; send what became safe to send."""
        if not delta:
            return
        self._parts.append(delta)
        self._length += len(delta)
        if self._length - self._attempted < max(MIN_STEP, self._attempted // 16):
            return
        self._attempted = self._length
        self._commit(self.raw)

    def finish(self, text: str | None = None) -> None:
        """Send the rest of the redaction of the whole text (`text`, else what was fed)."""
        whole = self._redact(self.raw if text is None else text)
        if not whole.startswith(self.sent):
            self.diverged = True
            return
        self._emit(whole[len(self.sent) :])

    def _commit(self, raw: str) -> None:
        limit = min(len(raw) - self.lookahead, _open_block(raw))
        if limit <= 0:
            return
        whole: str | None = None
        end = limit
        for _ in range(_CANDIDATES):
            cut = max(raw.rfind(ws, 0, end) for ws in _WHITESPACE) + 1
            if cut <= 0:
                return
            prefix = self._redact(raw[:cut])
            if len(prefix) <= len(self.sent) or not prefix.startswith(self.sent):
                return  # nothing new, or the sent part now redacts differently: wait
            if whole is None:
                whole = self._redact(raw)
            if whole.startswith(prefix):
                self._emit(prefix[len(self.sent) :])
                return
            end = cut - 1

    def _emit(self, piece: str) -> None:
        if piece:
            self.sent += piece
            self._send(piece)


def _open_block(raw: str) -> int:
    """Where an unclosed `-----BEGIN` block starts (nothing from there is sent yet), else the end.

    A key block often redacts only once its END line is there (an indented block in YAML, a
    JSON string with `\\n` escapes), and its body lines are longer than any lookahead.
    Beyond `PEM_HOLD` characters the block is left to the lookahead and the prefix check.
    """
    begin = raw.rfind("-----BEGIN")
    if begin < 0 or len(raw) - begin > PEM_HOLD:
        return len(raw)
    end = raw.find("-----END", begin)
    if end >= 0 and raw.find("-----", end + 8) >= 0:
        return len(raw)  # closed: its END line is whole
    return begin
