"""History append: the assistant's tool-call message, then the results in the model's order.

Native providers get one `tool` message per call id; text-protocol providers get one user
message `[Tool results]\\n` followed by `<tool_result name="…">` blocks. With `redact_history`
on (the default) every text appended here passes the redactor: the user's message, the
assistant's text (beside native calls too), the arguments of its tool calls, tool names that
are not the registry's, and the final answer, so the model never re-reads a secret and the
history file (`--history-out`) holds none. The results arrive already redacted
(`SlotRecorder.close`); call ids arrive already redacted on every path (`parse.CallIds`).

The assistant message records the calls as the model made them (name and arguments before
hooks, delivery defaults and the runtime's `approved` marker), as the reference runtime does:
the model must never read a runtime-owned key as something it sent itself.

An answer whose stream was cut (a provider error, or the turn's cancel, after text arrived) is
kept as the assistant's partial text with a marker after a blank line: `[stream interrupted]`
or `[interrupted by user]` (`append_interrupted`), so the next turn's model reads what it
already said and that it did not finish.

Appends are O(calls of this response): nothing here walks or copies the whole history.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..providers.text_protocol import format_tool_results

if TYPE_CHECKING:
    # Annotations only: `provider_call` appends cut answers here, and `context` imports it.
    from ..redaction import Redactor
    from .context import ShownNames
    from .parse import ParsedToolCall, ParseResult
    from .results import Slot

__all__ = [
    "INTERRUPTED_BY_USER",
    "STREAM_INTERRUPTED",
    "append_final",
    "append_interrupted",
    "append_round",
    "append_user",
]

STREAM_INTERRUPTED = "[stream interrupted]"
"""Appended to a partial answer whose stream a provider error cut."""

INTERRUPTED_BY_USER = "[interrupted by user]"
"""Appended to a partial answer whose stream the turn's cancel cut."""


def append_user(
    messages: list[dict[str, Any]], text: str, *, redactor: Redactor | None = None
) -> None:
    """Append a user message, redacted when `redactor` is given (`redact_history` on)."""
    messages.append({"role": "user", "content": _shown(text, redactor)})


def append_final(
    messages: list[dict[str, Any]], text: str, *, redactor: Redactor | None = None
) -> None:
    """Append the assistant's final answer, redacted when `redactor` is given."""
    messages.append({"role": "assistant", "content": _shown(text, redactor)})


def append_interrupted(
    messages: list[dict[str, Any]], partial: str, marker: str, *, redactor: Redactor | None = None
) -> None:
    """Append a cut answer: `{partial}\n\n{marker}`, the partial redacted when `redactor` is
    given (the marker is ours and is not passed through it)."""
    content = f"{_shown(partial, redactor)}\n\n{marker}"
    messages.append({"role": "assistant", "content": content})


def _shown(text: str, redactor: Redactor | None) -> str:
    return text if redactor is None or not text else redactor.redact_text(text)


def append_round(
    messages: list[dict[str, Any]],
    parsed: ParseResult,
    slots: list[Slot],
    *,
    redactor: Redactor | None,
    names: ShownNames | None = None,
) -> None:
    """Append one tool round: the assistant message and every slot's model-visible text.

    Args:
        messages: the history, appended in place.
        parsed: the parsed response (native or text calls, and its text).
        slots: one per call, in the model's order, all closed.
        redactor: the runtime's redactor when `redact_history` is on, else None.
        names: the agent's shown names (registry names redacted once per agent); without
            them a registry name is redacted like any other when `redactor` is given.
    """
    if parsed.native:
        messages.append(
            {
                "role": "assistant",
                "content": _shown(parsed.text, redactor) or None,
                "tool_calls": [
                    _native_call(call, slot, redactor, names)
                    for call, slot in zip(parsed.calls, slots, strict=True)
                ],
            }
        )
        for slot in slots:
            messages.append(
                {"role": "tool", "tool_call_id": slot.call_id, "content": slot.model_text}
            )
        return
    messages.append({"role": "assistant", "content": _shown(parsed.text, redactor)})
    messages.append(
        {
            "role": "user",
            "content": format_tool_results(
                [(_name(slot.name, slot, redactor, names), slot.model_text) for slot in slots]
            ),
        }
    )


def _native_call(
    call: ParsedToolCall, slot: Slot, redactor: Redactor | None, names: ShownNames | None
) -> dict[str, Any]:
    if redactor is None:
        arguments = _JSON.encode(call.arguments)
    elif slot.redacted_arguments and slot.arguments == call.arguments:
        arguments = slot.redacted_arguments  # already redacted once for the events: reuse it
    else:
        arguments = _JSON.encode(redactor.redact_value(call.arguments))
    return {
        "id": call.call_id,
        "type": "function",
        "function": {"name": _name(call.name, slot, redactor, names), "arguments": arguments},
    }


_JSON = json.JSONEncoder(ensure_ascii=False, default=str)


def _name(name: str, slot: Slot, redactor: Redactor | None, names: ShownNames | None) -> str:
    # Every name is a payload: an invented one is model output, a registry one the operator's.
    # A registry name's shown form is memoised per agent; an invented one is redacted each time.
    if redactor is None:
        return name
    if names is not None and slot.known_tool and name == slot.name:
        return names.tool(name)
    return redactor.redact_text(name)
