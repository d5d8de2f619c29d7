"""Context limits: which part of the history a turn's provider requests send.

Two rules (issue 18 item 5), both cutting whole turns, oldest first:

- **Budget** (`RuntimeConfig.context_token_budget`): before the first request of a turn, the
  oldest whole turns are left out until the estimate fits the budget.
- **Overflow**: when a provider reports that the prompt exceeds its context window
  (`ProviderContextOverflowError`), the oldest whole turns are left out until the estimate is
  at most two thirds of what was sent, and the request is sent again, once.

The system message always stays, and so does the turn being run: from this turn's user
message on nothing is ever left out (a turn that overflows on its own cannot be helped, and
ends as the provider error does). A turn starts at a user message that is not one the runtime
writes inside a turn (a text-protocol `[Tool results]` block, the parse-error feedback, the
iteration cap's summary request): cutting only there never separates an assistant's tool
calls from their results (native `tool` messages and the `[Tool results]` block follow their
assistant message directly), and what is sent still opens with a user message.

The history itself is never cut. It is the conversation's record (`--history-out`; a server
conversation, whose own bound drops whole turns by message count and keeps their positions);
what is cut is the window this turn's requests send, for the rest of the turn. A later turn
decides again from its own first request.

Token estimate (`estimate_tokens`): ⌈characters / 4⌉ + 4 per message, over the message text
and each tool call's id, name and arguments. Native tool specs are not counted (they cannot be
cut). It reads string lengths only: O(messages), no tokenizer, no encoding. A real tokenizer
counts differently; the estimate only decides what to leave out, and the overflow rule
compares it with itself (two thirds of the estimate of what overflowed).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..observability.events import ContextTrimReason
from ..providers.text_protocol import PARSE_ERROR_FEEDBACK

__all__ = ["OVERFLOW_KEEP", "ContextWindow", "Trim", "estimate_tokens"]

OVERFLOW_KEEP = (2, 3)
"""After an overflow, what is sent again is at most this fraction of the estimate of what
overflowed (numerator, denominator)."""

_MESSAGE_OVERHEAD = 4
"""Tokens a message costs beyond its text (role and framing), as the reference runtime counts."""

_TOOL_RESULTS = "[Tool results]\n"


def estimate_tokens(messages: Iterable[dict[str, Any]]) -> int:
    """The token estimate of `messages` (see the module docstring)."""
    return sum(_message_tokens(message) for message in messages)


def _message_tokens(message: dict[str, Any]) -> int:
    chars = _text_chars(message.get("content"))
    for call in message.get("tool_calls") or ():
        if isinstance(call, dict):
            function = call.get("function")
            chars += _text_chars(call.get("id"))
            if isinstance(function, dict):
                chars += _text_chars(function.get("name")) + _text_chars(function.get("arguments"))
    return -(-chars // 4) + _MESSAGE_OVERHEAD


def _text_chars(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, list):  # content parts: [{"type": "text", "text": …}, …]
        return sum(_text_chars(part.get("text")) for part in value if isinstance(part, dict))
    return 0


@dataclass(frozen=True, kw_only=True, slots=True)
class Trim:
    """What one cut left out: counts only, never content (span events and log lines show it)."""

    reason: ContextTrimReason
    messages_dropped: int
    """Messages this cut left out (not counting those an earlier cut of the turn left out)."""
    turns_dropped: int
    tokens_before: int
    """The estimate of what was (or would have been) sent before the cut."""
    tokens_after: int
    """The estimate of what is sent after it."""
    token_budget: int
    """The target: `context_token_budget`, or two thirds of `tokens_before` after an overflow."""


class ContextWindow:
    """The part of a turn's history its requests send: the system message, then the history
    from the first kept turn on. One per turn, built once the turn's user message is in.

    Args:
        messages: the turn's history (`TurnState.messages`), read, never changed.
        turn_start: the index in `messages` of this turn's user message: never left out.
        runtime_texts: user-message texts the runtime writes inside a turn (the cap's summary
            request), which therefore never start one.
    """

    def __init__(
        self, messages: list[dict[str, Any]], *, turn_start: int, runtime_texts: Sequence[str] = ()
    ) -> None:
        self._messages = messages
        # Positions count from the first message after the leading system message(s): the loop
        # may insert the system message later in the turn, and these must not move with it.
        self._turn_start = turn_start - _system_count(messages)
        self._dropped = 0
        self._runtime_texts = frozenset((PARSE_ERROR_FEEDBACK, *runtime_texts))

    @property
    def dropped(self) -> int:
        """Messages of the history this turn's requests leave out (0: all are sent)."""
        return self._dropped

    def messages(self) -> list[dict[str, Any]]:
        """The messages to send: the history itself when nothing is left out, else a new list."""
        if not self._dropped:
            return self._messages
        system = _system_count(self._messages)
        return self._messages[:system] + self._messages[system + self._dropped :]

    def fit_budget(self, budget: int) -> Trim | None:
        """Leave out the oldest whole turns until the estimate is at most `budget`.

        Returns:
            What was left out, or None when it already fits or no earlier turn is left to cut
            (a cut that cannot reach the budget still leaves out every earlier turn).
        """
        return self._fit(budget, ContextTrimReason.BUDGET, estimate_tokens(self.messages()))

    def after_overflow(self) -> Trim | None:
        """Leave out the oldest whole turns until the estimate is at most two thirds of what
        was just sent.

        Returns:
            What was left out, or None when no earlier turn is left to cut.
        """
        before = estimate_tokens(self.messages())
        numerator, denominator = OVERFLOW_KEEP
        return self._fit(before * numerator // denominator, ContextTrimReason.OVERFLOW, before)

    def _fit(self, budget: int, reason: ContextTrimReason, before: int) -> Trim | None:
        if before <= budget:
            return None
        body = self._messages[_system_count(self._messages) :]
        # Where a cut may fall: at the start of any earlier turn, or at this turn's start.
        cuts = [
            position
            for position in range(self._dropped + 1, self._turn_start)
            if self._starts_turn(body[position])
        ]
        if self._turn_start > self._dropped:
            cuts.append(self._turn_start)
        if not cuts:
            return None
        tokens, start, turns = before, self._dropped, 0
        for cut in cuts:
            tokens -= estimate_tokens(body[start:cut])
            start, turns = cut, turns + 1
            if tokens <= budget:
                break
        dropped, self._dropped = start - self._dropped, start
        return Trim(
            reason=reason,
            messages_dropped=dropped,
            turns_dropped=turns,
            tokens_before=before,
            tokens_after=tokens,
            token_budget=budget,
        )

    def _starts_turn(self, message: dict[str, Any]) -> bool:
        if message.get("role") != "user":
            return False
        content = message.get("content")
        if not isinstance(content, str):
            return True
        return not content.startswith(_TOOL_RESULTS) and content not in self._runtime_texts


def _system_count(messages: list[dict[str, Any]]) -> int:
    count = 0
    for message in messages:
        if message.get("role") != "system":
            break
        count += 1
    return count
