"""History append: the assistant's tool-call message, then the results in the model's order.

Native providers get one `tool` message per call id; text-protocol providers get one user
message `[Tool results]\\n` followed by `<tool_result name="…">` blocks. With `redact_history`
on (the default) the arguments of the assistant's tool calls are redacted too, so the model
never re-reads a secret it was shown once.

The assistant message records the calls as the model made them (name and arguments before
hooks, delivery defaults and the runtime's `approved` marker), as the reference runtime does:
the model must never read a runtime-owned key as something it sent itself.

Appends are O(calls of this response): nothing here walks or copies the whole history.
"""

from __future__ import annotations

import json
from typing import Any

from ..providers.text_protocol import format_tool_results
from ..redaction import Redactor
from .parse import ParsedToolCall, ParseResult
from .results import Slot

__all__ = ["append_final", "append_round", "append_user"]


def append_user(messages: list[dict[str, Any]], text: str) -> None:
    """Append a user message."""
    messages.append({"role": "user", "content": text})


def append_final(messages: list[dict[str, Any]], text: str) -> None:
    """Append the assistant's final answer."""
    messages.append({"role": "assistant", "content": text})


def append_round(
    messages: list[dict[str, Any]],
    parsed: ParseResult,
    slots: list[Slot],
    *,
    redactor: Redactor | None,
) -> None:
    """Append one tool round: the assistant message and every slot's model-visible text.

    Args:
        messages: the history, appended in place.
        parsed: the parsed response (native or text calls, and its text).
        slots: one per call, in the model's order, all closed.
        redactor: the runtime's redactor when `redact_history` is on, else None.
    """
    if parsed.native:
        messages.append(
            {
                "role": "assistant",
                "content": parsed.text or None,
                "tool_calls": [
                    _native_call(call, slot, redactor)
                    for call, slot in zip(parsed.calls, slots, strict=True)
                ],
            }
        )
        for slot in slots:
            messages.append(
                {"role": "tool", "tool_call_id": slot.call_id, "content": slot.model_text}
            )
        return
    content = parsed.text if redactor is None else redactor.redact_text(parsed.text)
    messages.append({"role": "assistant", "content": content})
    messages.append(
        {
            "role": "user",
            "content": format_tool_results([(slot.name, slot.model_text) for slot in slots]),
        }
    )


def _native_call(call: ParsedToolCall, slot: Slot, redactor: Redactor | None) -> dict[str, Any]:
    if redactor is None:
        arguments = _JSON.encode(call.arguments)
    elif slot.redacted_arguments and slot.arguments == call.arguments:
        arguments = slot.redacted_arguments  # already redacted once for the events: reuse it
    else:
        arguments = _JSON.encode(redactor.redact_value(call.arguments))
    return {
        "id": call.call_id,
        "type": "function",
        "function": {"name": _name(call, slot, redactor), "arguments": arguments},
    }


_JSON = json.JSONEncoder(ensure_ascii=False, default=str)


def _name(call: ParsedToolCall, slot: Slot, redactor: Redactor | None) -> str:
    # An invented tool name is model output and may carry a secret; registry names are ours.
    if redactor is None or slot.known_tool:
        return call.name
    return redactor.redact_text(call.name)
