"""The text tool-call protocol: instructions out, calls in, results back (LIFECYCLE §3, §7).

Providers without native tool calling (`Provider.native_tools is False`) learn the tools from
a system-prompt section (`build_tool_instructions`), write calls as
`<tool_call>{"name": …, "arguments": {…}}</tool_call>` and read results as
`<tool_result name="…">` blocks under a `[Tool results]` user message (`format_tool_results`).
This module owns that wire format and nothing else: it never talks to a backend, never retries
and never decides what an unknown or excluded tool means. `turn/` reads `is_parse_failure` and
sends `PARSE_ERROR_FEEDBACK` up to `MAX_PARSE_RETRIES` times, then ends the turn with
`PARSE_FAILURE_FINAL`.

Accepted call forms (anything else is prose):

- a whole response (after stripping whitespace) that is a JSON call object
  `{"name": …, "arguments": …}`, a JSON array of them, or `{"tool_calls": [...]}`; elements may
  be OpenAI style `{"function": {"name": …, "arguments": …}}`;
- `<tool_call>`, `<tool_calls>`, `<toolcall>` and `<tool-call>` tags anywhere in the text, with
  a JSON body (object or array, optionally inside a ```` ```json ```` fence);
- ```` ```tool_call ```` fenced JSON anywhere in the text.

What is risky here:

- Model output is hostile input. Parsing must never raise and must stay linear: tags are
  matched by scanning for the opener and then searching for its closer, never by one regex
  spanning the body, and an opener whose closer is missing is remembered so the rest of the
  text is not searched again for every later opener of the same kind.
- A false negative hides a call; a false positive runs a tool the model did not mean to call.
  So bare JSON counts only as the *whole* response (JSON after prose is an example, not a
  call), and a name that is not an effective tool never becomes a call.
- Results are not escaped (the model must read tool output verbatim), so a tool whose output
  contains `</tool_result>` can forge a block boundary; only the name attribute is escaped.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..tools.base import ToolSpec

__all__ = [
    "MAX_ARGUMENT_DEPTH",
    "MAX_PARSE_RETRIES",
    "PARSE_ERROR_FEEDBACK",
    "PARSE_FAILURE_FINAL",
    "TextParse",
    "TextToolCall",
    "build_tool_instructions",
    "depth_within",
    "format_tool_results",
    "is_parse_failure",
    "parse_text_tool_calls",
    "speaks_text_protocol",
    "strip_tool_envelopes",
]

MAX_PARSE_RETRIES = 2
"""How many times the loop sends `PARSE_ERROR_FEEDBACK` before it gives up on the turn."""

PARSE_FAILURE_FINAL = (
    "I generated an internal tool-call format error and could not complete this request. "
    "Please try again."
)
"""The turn's final answer once `MAX_PARSE_RETRIES` feedback rounds all failed to parse."""

PARSE_ERROR_FEEDBACK = (
    "[Tool call parse error] Your last response looked like a tool call, but it could not be "
    "parsed into a call to an available tool, so no tool was run. Write each call as a JSON "
    "object in its own tag, using a tool name from the tool list:\n"
    '<tool_call>{"name": "tool_name", "arguments": {"param": "value"}}</tool_call>\n'
    "If you do not need a tool, answer in plain text without tool-call tags."
)
"""The user message the loop sends back when `is_parse_failure` is true."""

MAX_ARGUMENT_DEPTH = 64
"""Arguments nested deeper than this are invalid, text or native (`turn/parse.py` applies the
same cap): later steps walk them recursively."""

_TAG_KINDS = ("tool_calls", "tool_call", "toolcall", "tool-call")
_FENCE_KIND = "```"

# One opener regex for tags and fences, so a single left-to-right scan yields blocks in order
# of appearance. Attributes are bounded ({0,200}) and cannot contain `<`/`>`, which keeps the
# match linear; `tool_calls` comes before its prefix `tool_call` in the alternation.
_OPENER = re.compile(
    r"<(tool_calls|tool_call|toolcall|tool-call)(?:\s[^<>]{0,200})?>"
    r"|```[ \t]*(tool_call)(?![\w-])",
    re.IGNORECASE,
)
_CLOSERS = {kind: re.compile(rf"</\s*{re.escape(kind)}\s*>", re.IGNORECASE) for kind in _TAG_KINDS}
_ORPHAN_CLOSER = re.compile(r"</\s*(?:tool_calls|tool_call|toolcall|tool-call)\s*>", re.IGNORECASE)
_FENCE_INFO = re.compile(r"\A[ \t]*[A-Za-z_-]*")
_ENVELOPE_HINT = re.compile(r"<tool[_-]?call|```[ \t]*tool_call", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class TextToolCall:
    """One tool call read from model text, before preparation gives it a call id."""

    name: str
    """The canonical tool name from the effective tools (matched case-insensitively)."""

    arguments: dict[str, Any]
    """The decoded arguments object; `{}` when the model gave none."""


@dataclass(frozen=True, slots=True)
class TextParse:
    """What `parse_text_tool_calls` read from one response."""

    calls: list[TextToolCall]
    """Valid calls to effective tools, in order of appearance; the loop prepares these."""

    prose: str
    """The text with tool-call envelopes removed and stripped; the final answer when no calls."""

    envelope_seen: bool
    """True when the text looks like a tool envelope, whether or not it yielded a valid call."""


@dataclass(frozen=True, slots=True)
class _Block:
    """One tag or fence found by the scanner; `body` is None when its closer is missing."""

    start: int
    end: int
    body: str | None


class _NameResolver:
    """Maps a called name to the canonical effective tool name, case-insensitively."""

    def __init__(self, tool_names: Iterable[str]) -> None:
        self._exact = set(tool_names)
        self._folded: dict[str, str] = {}
        # Sorted so that names differing only by case resolve the same way on every run.
        for name in sorted(self._exact):
            self._folded.setdefault(name.lower(), name)

    def resolve(self, called: str) -> str | None:
        """The canonical name for `called`, or None when it is not an effective tool."""
        called = called.strip()
        if called in self._exact:
            return called
        return self._folded.get(called.lower())


def speaks_text_protocol(*, native_tools: bool, strict: bool) -> bool:
    """Tell whether a turn speaks the text protocol: instructions in the system prompt,
    `<tool_call>` tags in replies parsed as calls.

    `strict_tool_parsing` hides the text protocol from every provider (LIFECYCLE §3): a native
    provider's tags are never parsed, and a text-protocol provider gets no tag instructions and
    its tags are plain text. Without it, a text-protocol provider is taught the tags, and a
    native provider's text is still parsed when it sent no native calls (models fall back to
    tags) — `turn/parse.py` decides that second case on its own.

    Args:
        native_tools: `Provider.native_tools`.
        strict: `RuntimeConfig.strict_tool_parsing`.

    Returns:
        True when the system prompt must carry `build_tool_instructions` and replies are parsed
        for tags.
    """
    return not native_tools and not strict


def build_tool_instructions(specs: list[ToolSpec]) -> str:
    """Build the system-prompt section that teaches a text-protocol model to call tools.

    The section lists each tool (name, description, parameters as compact JSON with sorted
    keys) in the order given, and explains the `<tool_call>` and `<tool_result>` formats. The
    same specs always give the same text, so the prompt stays cacheable.

    Args:
        specs: the effective tools of this iteration, in the order the model should see them.

    Returns:
        The section text, or `""` when there are no tools (the model is not told about tools).
    """
    if not specs:
        return ""
    lines = [
        "## Tool use",
        "",
        "You can call the tools listed below. To call a tool, write a <tool_call> tag whose body "
        "is a JSON object with the tool's name and its arguments:",
        "",
        '<tool_call>{"name": "tool_name", "arguments": {"param": "value"}}</tool_call>',
        "",
        "Write one call per <tool_call> tag. You may write several tags in one response; they "
        "are handled in the order written. The arguments must be a JSON object that matches the "
        "tool's parameters schema. The results come back in the next message, one block per "
        "call:",
        "",
        '<tool_result name="tool_name">',
        "…",
        "</tool_result>",
        "",
        "When you do not need a tool, answer in plain text without any <tool_call> tag.",
        "",
        "### Available tools",
    ]
    for spec in specs:
        lines.extend(["", f"- {spec.name}: {_one_line(spec.description)}"])
        lines.append(f"  Parameters: {_compact_json(spec.parameters)}")
    return "\n".join(lines)


def _one_line(text: str) -> str:
    return " ".join(text.split()) or "(no description)"


def _compact_json(value: Any) -> str:
    # default=str: a schema with a stray non-JSON value must still render, not crash the turn.
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def parse_text_tool_calls(text: str, tool_names: set[str]) -> TextParse:
    """Read the tool calls a text-protocol model wrote in one response.

    Bare JSON counts only when it is the whole response; tags and fences count anywhere, in
    order of appearance. A call whose name is not an effective tool, whose arguments are not
    an object (or a JSON string of one), or whose body is not JSON is dropped; if that leaves
    no call while an envelope was seen, `is_parse_failure` is true and the loop sends feedback.
    Never raises: garbage, unbalanced tags and over-deep JSON just yield no call.

    Args:
        text: the model's response text.
        tool_names: the effective tool names of this iteration.

    Returns:
        The valid calls, the prose around them and whether an envelope was seen.
    """
    resolver = _NameResolver(tool_names)
    bare_envelope, bare_payload = _read_bare_json(text.strip())
    if bare_payload is not None:
        return TextParse(
            calls=_calls_from_payload(bare_payload, resolver), prose="", envelope_seen=True
        )
    blocks = _scan_blocks(text)
    calls: list[TextToolCall] = []
    for block in blocks:
        if block.body is not None:
            calls.extend(_calls_from_payload(_decode_body(block.body), resolver))
    envelope_seen = bare_envelope or _ENVELOPE_HINT.search(text) is not None
    prose = "" if bare_envelope else _remove_blocks(text, blocks)
    return TextParse(calls=calls, prose=prose, envelope_seen=envelope_seen)


def is_parse_failure(parse: TextParse) -> bool:
    """Tell whether a response looked like a tool envelope but yielded no valid call.

    Args:
        parse: the result of `parse_text_tool_calls`.

    Returns:
        True when the loop must reject the response and send `PARSE_ERROR_FEEDBACK`.
    """
    return parse.envelope_seen and not parse.calls


def strip_tool_envelopes(text: str) -> str:
    """Remove tool-call envelopes from `text`, leaving the prose a user may see.

    Closed tags and fences are cut out, an unclosed one is cut to the end of the text (the
    usual cause is a truncated response), orphan closing tags are dropped, and a whole
    response that is a bare JSON envelope becomes `""`. Used for `TextParse.prose` and when
    strict parsing hides the text protocol.

    Args:
        text: a model response.

    Returns:
        The remaining prose, stripped.
    """
    if _read_bare_json(text.strip())[0]:
        return ""
    return _remove_blocks(text, _scan_blocks(text))


def format_tool_results(results: list[tuple[str, str]]) -> str:
    """Render the history message that returns results to a text-protocol model.

    Args:
        results: `(tool name, model-visible result text)` per call, in the model's order.

    Returns:
        `"[Tool results]\\n"` then one `<tool_result name="…">` block per result, joined by
        newlines. The name is escaped for an XML attribute; the text is passed verbatim.
    """
    blocks = [
        f'<tool_result name="{html.escape(name, quote=True)}">\n{text}\n</tool_result>'
        for name, text in results
    ]
    return "[Tool results]\n" + "\n".join(blocks)


def _read_bare_json(stripped: str) -> tuple[bool, Any]:
    """Read a whole response as a bare JSON envelope.

    Returns:
        `(envelope_seen, payload)`: payload is the decoded JSON when it has an envelope shape,
        else None. A response that starts like JSON, does not decode and mentions the envelope
        keys (typically a truncated call) is an envelope with no payload.
    """
    if not stripped or stripped[0] not in "{[":
        return False, None
    payload = _loads(stripped)
    if payload is _INVALID:
        looks_like_call = '"tool_calls"' in stripped or (
            '"name"' in stripped and '"arguments"' in stripped
        )
        return looks_like_call, None
    if isinstance(payload, dict) and ("tool_calls" in payload or _has_call_shape(payload)):
        return True, payload
    if isinstance(payload, list) and any(_has_call_shape(item) for item in payload):
        return True, payload
    return False, None


def _has_call_shape(value: Any) -> bool:
    if not isinstance(value, dict):
        return False
    return ("name" in value and "arguments" in value) or isinstance(value.get("function"), dict)


def _scan_blocks(text: str) -> list[_Block]:
    """Find every tag and fence envelope, left to right, without overlapping."""
    blocks: list[_Block] = []
    unclosed: set[str] = set()
    pos = 0
    while (match := _OPENER.search(text, pos)) is not None:
        kind = match.group(1).lower() if match.group(1) else _FENCE_KIND
        close = None if kind in unclosed else _find_closer(text, kind, match.end())
        if close is None:
            # No closer after this point, so none after any later opener of this kind either.
            unclosed.add(kind)
            blocks.append(_Block(start=match.start(), end=len(text), body=None))
            pos = match.end()
            continue
        body_end, block_end = close
        blocks.append(_Block(start=match.start(), end=block_end, body=text[match.end() : body_end]))
        pos = block_end
    return blocks


def _find_closer(text: str, kind: str, start: int) -> tuple[int, int] | None:
    """`(body end, block end)` of the closer of `kind` at or after `start`, if any."""
    if kind == _FENCE_KIND:
        index = text.find(_FENCE_KIND, start)
        return None if index < 0 else (index, index + len(_FENCE_KIND))
    match = _CLOSERS[kind].search(text, start)
    return None if match is None else (match.start(), match.end())


def _remove_blocks(text: str, blocks: list[_Block]) -> str:
    """Cut `blocks` out of `text`; an unclosed block swallows the rest of the text."""
    pieces: list[str] = []
    pos = 0
    for block in blocks:
        pieces.append(text[pos : block.start])
        pos = block.end
        if block.body is None:
            break
    else:
        pieces.append(text[pos:])
    return _join_prose(_ORPHAN_CLOSER.sub("", piece) for piece in pieces)


def _join_prose(pieces: Iterable[str]) -> str:
    """Join the text around removed envelopes, keeping a paragraph break where there was one.

    Built as one list and joined once: re-stripping a growing string per envelope would be
    quadratic in a response made of thousands of tags.
    """
    parts: list[str] = []
    newline_in_gap = False
    for piece in pieces:
        core = piece.strip()
        if not core:
            newline_in_gap = newline_in_gap or "\n" in piece
            continue
        leading = piece[: len(piece) - len(piece.lstrip())]
        if parts:
            parts.append("\n\n" if newline_in_gap or "\n" in leading else " ")
        parts.append(core)
        newline_in_gap = "\n" in piece[len(piece.rstrip()) :]
    return "".join(parts)


class _Invalid:
    """Marker for a body or argument string that is not valid JSON."""


_INVALID = _Invalid()


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        # ValueError covers malformed JSON and over-long integers; RecursionError over-deep JSON.
        return _INVALID


def _decode_body(body: str) -> Any:
    """Decode a tag or fence body, tolerating whitespace and a ```json fence inside it."""
    body = body.strip()
    if body.startswith(_FENCE_KIND):
        body = _FENCE_INFO.sub("", body[len(_FENCE_KIND) :], count=1).strip()
        if body.endswith(_FENCE_KIND):
            body = body[: -len(_FENCE_KIND)].strip()
    return _loads(body)


def _calls_from_payload(payload: Any, resolver: _NameResolver) -> list[TextToolCall]:
    """Turn a decoded envelope (call, array or `{"tool_calls": …}`) into valid calls."""
    if isinstance(payload, dict) and "tool_calls" in payload:
        payload = payload["tool_calls"]
    items = payload if isinstance(payload, list) else [payload]
    calls = [_call_from_item(item, resolver) for item in items]
    return [call for call in calls if call is not None]


def _call_from_item(item: Any, resolver: _NameResolver) -> TextToolCall | None:
    if not isinstance(item, dict):
        return None
    function = item.get("function")
    source = function if isinstance(function, dict) else item
    called = source.get("name")
    if not isinstance(called, str):
        return None
    name = resolver.resolve(called)
    arguments = _decode_arguments(source.get("arguments"))
    if name is None or arguments is None:
        return None
    return TextToolCall(name=name, arguments=arguments)


def _decode_arguments(raw: Any) -> dict[str, Any] | None:
    """The arguments object, `{}` when absent or empty, None when invalid."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}
    value = _loads(raw) if isinstance(raw, str) else raw
    if not isinstance(value, dict) or not depth_within(value):
        return None
    return value


def depth_within(value: Any, limit: int = MAX_ARGUMENT_DEPTH) -> bool:
    """True when `value` nests no deeper than `limit` (the object itself is level 1).

    Iterative on purpose: the point is to refuse structures a recursive walk would choke on.
    """
    stack = [(value, 1)]
    while stack:
        current, depth = stack.pop()
        if depth > limit:
            return False
        if isinstance(current, dict):
            stack.extend((child, depth + 1) for child in current.values())
        elif isinstance(current, (list, tuple)):
            stack.extend((child, depth + 1) for child in current)
    return True
