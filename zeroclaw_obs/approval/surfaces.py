"""The approval surfaces: where an answer to "may this tool call run?" comes from.

This module owns the answer sources of LIFECYCLE §5: scripted answers from a scenario, the
interactive terminal prompt, and an operator back-channel (ACP/web). Each surface either returns
a `SurfaceAnswer` or `None`, meaning "no decision available"; turning `None` into a runtime
denial, the allowlist and the audit entry is `ApprovalManager`'s job, not a surface's. This module
also owns `sanitize_replacement`, the one cleaning step for deny-with-edit text.

What the terminal shows (`describe_request`): the tool (for an MCP tool followed on the same
line by its server, what its annotations amount to and the standard hints, e.g.
`Approval required: git__git_commit (MCP server git; destructive: destructiveHint=true)`,
on the tool's line because argument lines are indented and a model-chosen argument named
`annotations` must not be able to pass for it), then one argument per line, the
arguments that decide the call first (`request.primary`, e.g. `command` for `shell`), each whole
and never wrapped or shortened, so the operator reads and can copy exactly what will run (a
wrapped line would add breaks that cannot be told from the command's own text; the terminal
wraps a long line by itself). The other arguments follow, shortest first, each wrapped at
`PROMPT_WIDTH` columns. Choice: together they are bounded to `REST_DISPLAY_LIMIT` characters
with an explicit marker, so a model cannot flood the screen and scroll the deciding argument out
of view; the audit entry and a back-channel operator still get every argument complete.

Risky parts:
- The terminal prompt prints model-chosen text (the tool name and the arguments) to the
  operator's terminal. The arguments are redacted by the caller; control characters, line
  breaks, bidi controls and lone surrogates are escaped here too, so a model cannot hide or
  forge text with escape sequences, or fake a line of the prompt.
- `TerminalPrompter` reads a line in a worker thread so the event loop keeps running. A thread
  blocked in `readline` cannot be interrupted: cancelling the waiting task returns at once, but
  the thread stays parked until the line arrives or stdin closes.
- A back-channel callback is operator code. Any failure, wrong return type or a timeout counts
  as an unreachable operator (`None`), never as an answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import json
import logging
import re
import sys
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from .._terminal import printable
from ..config import ApprovalAnswer, ReplaceWith
from ..observability.events import Decision

if TYPE_CHECKING:
    from .manager import ApprovalRequest

__all__ = [
    "MAX_REPLACEMENT_BYTES",
    "PROMPT_TEMPLATE",
    "PROMPT_WIDTH",
    "REST_DISPLAY_LIMIT",
    "Backchannel",
    "BackchannelCallback",
    "Decision",
    "ScriptedAnswers",
    "Surface",
    "SurfaceAnswer",
    "TerminalPrompter",
    "describe_request",
    "sanitize_replacement",
]

_log = logging.getLogger(__name__)

MAX_REPLACEMENT_BYTES = 65536
"""The most UTF-8 bytes a deny-with-edit replacement may keep."""

PROMPT_TEMPLATE = "[Y]es / [N]o / [A]lways for {tool}: "
"""The interactive prompt, exact (LIFECYCLE §5)."""

PROMPT_WIDTH = 100
"""The column at which the terminal wraps an argument that does not decide the call."""

REST_DISPLAY_LIMIT = 2000
"""The most characters of the arguments that do not decide the call the terminal prints."""

# Unicode category Cc is exactly U+0000-U+001F and U+007F-U+009F (C0, DEL, C1); \t \n \r stay.
_CONTROL_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# A lone surrogate (a JSON "\ud800" decodes to one) cannot be encoded as UTF-8 at all.
_LONE_SURROGATES = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True, slots=True)
class SurfaceAnswer:
    """One decision from one surface.

    Raises:
        ValueError: `decision` is not a `Decision` value, or `replacement` is missing for
            `replace` or present for any other decision.
    """

    decision: Decision
    """The answer; a plain string such as `"yes"` is converted to `Decision`."""

    surface: str
    """`cli`, `scenario`, `backchannel` or `web`: the audit log's `surface`."""

    decided_by: str
    """Who answered, e.g. `terminal:alice`, `scenario`, or a back-channel operator id."""

    replacement: str | None = None
    """The raw deny-with-edit text for `replace`; the manager sanitises it."""

    def __post_init__(self) -> None:
        if not isinstance(self.decision, Decision):
            # Frozen: the only way to normalise a field in __post_init__.
            object.__setattr__(self, "decision", Decision(self.decision))
        if (self.decision is Decision.REPLACE) != (self.replacement is not None):
            raise ValueError("a replacement is given exactly when the decision is 'replace'")


class Surface(Protocol):
    """Anything that can answer an approval request."""

    async def ask(self, request: ApprovalRequest) -> SurfaceAnswer | None:
        """Ask for a decision on one call.

        Args:
            request: the call, with its arguments already redacted.

        Returns:
            The answer, or `None` when this surface has no decision to give.
        """
        ...


def sanitize_replacement(text: str) -> str:
    """Clean deny-with-edit text before it becomes a successful synthetic result.

    Every character of Unicode category Cc is removed except `\\n`, `\\r` and `\\t` (so DEL and
    the C1 controls go too); a lone surrogate, which has no UTF-8 encoding, becomes U+FFFD.
    The result is then cut to at most `MAX_REPLACEMENT_BYTES` UTF-8 bytes, at a character
    boundary.

    Args:
        text: the replacement an operator or a script supplied.

    Returns:
        The text the model will read in the tool's slot.
    """
    cleaned = _LONE_SURROGATES.sub("\ufffd", _CONTROL_CHARS.sub("", text))
    # Every character is at most 4 bytes, so short text needs no encoding to measure.
    if len(cleaned) * 4 <= MAX_REPLACEMENT_BYTES:
        return cleaned
    encoded = cleaned.encode("utf-8")
    if len(encoded) <= MAX_REPLACEMENT_BYTES:
        return cleaned
    # The prefix is valid UTF-8 except possibly a cut last character, which "ignore" drops.
    return encoded[:MAX_REPLACEMENT_BYTES].decode("utf-8", errors="ignore")


def _shown(value: Any) -> str:
    """An argument value as the operator reads it: a string as it is, anything else as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _wrapped(line: str, width: int) -> list[str]:
    """`line` indented by two, cut every `width` columns; continuation lines indented by four.

    Every character is kept: the pieces joined again are `line`.
    """
    first, rest = width - 2, width - 4
    pieces = [f"  {line[:first]}"]
    pieces.extend(f"    {line[i : i + rest]}" for i in range(first, len(line), rest))
    return pieces


def describe_request(request: ApprovalRequest, *, width: int = PROMPT_WIDTH) -> str:
    """The text the terminal prints above the prompt: the tool and its arguments.

    The arguments that decide the call (`request.primary`) come first, one per line, whole and
    unwrapped. The others follow shortest first, wrapped at `width` columns, and together
    bounded to `REST_DISPLAY_LIMIT` characters, with a marker saying how much is not shown. A
    request that carries only `arguments_summary` shows it whole on the tool's line. Every
    model-chosen text is escaped (`_terminal.printable`).

    Args:
        request: the call; its arguments are already redacted.
        width: the column at which the non-deciding arguments wrap.

    Returns:
        One or more lines, each ending with a line break.
    """
    tool = printable(request.display_tool) + _mcp_label(request)
    arguments = request.arguments
    if arguments is None:
        return f"Approval required: {tool} {printable(request.arguments_summary)}\n"
    if not arguments:
        return f"Approval required: {tool} (no arguments)\n"
    lines = [f"Approval required: {tool}"]
    primary = [key for key in request.primary if key in arguments]
    for key in primary:
        lines.append(f"  {printable(str(key))}: {printable(_shown(arguments[key]))}")
    rest = sorted(
        (
            f"{printable(str(key))}: {printable(_shown(value))}"
            for key, value in arguments.items()
            if key not in primary
        ),
        key=len,
    )
    budget = REST_DISPLAY_LIMIT
    for index, line in enumerate(rest):
        if budget <= 0:
            lines.append(
                f"  [... {len(rest) - index} more arguments not shown;"
                " the audit entry records them all]"
            )
            break
        if len(line) > budget:
            line = f"{line[:budget]} [... {len(line) - budget} more characters not shown]"
        budget -= len(line)
        lines.extend(_wrapped(line, width))
    return "\n".join(lines) + "\n"


def _mcp_label(request: ApprovalRequest) -> str:
    """What the tool's line says about an MCP tool, escaped; empty for any other tool.

    Returns:
        ` (MCP server {server}; {verdict}: {hint}={value}, …)`, the hints in the order of
        `request.annotations` (booleans as `true`/`false`, `title` as a JSON string), or
        ` (MCP server {server}; no annotations)`.
    """
    if request.server is None:
        return ""
    hints = ", ".join(
        f"{printable(str(key))}={printable(json.dumps(value, ensure_ascii=False))}"
        for key, value in (request.annotations or {}).items()
    )
    verdict = printable(request.mcp_verdict or "")
    detail = f"{verdict}: {hints}" if hints else verdict
    return f" (MCP server {printable(request.server)}; {detail})"


class ScriptedAnswers:
    """Replays a scenario's `approval.answers` in order, one per request, whatever the mode.

    Answers are consumed in the order `ask` is called; the surface is `scenario`.
    """

    def __init__(self, answers: Iterable[ApprovalAnswer]) -> None:
        """Queue the answers.

        Args:
            answers: `yes`, `no`, `always` or a `ReplaceWith`, as in `ApprovalConfig.answers`.

        Raises:
            ValueError: an answer is none of those.
        """
        self._pending: deque[SurfaceAnswer] = deque(self._convert(answer) for answer in answers)

    @staticmethod
    def _convert(answer: ApprovalAnswer) -> SurfaceAnswer:
        if isinstance(answer, ReplaceWith):
            return SurfaceAnswer(Decision.REPLACE, "scenario", "scenario", answer.replace_with)
        decision = Decision(answer)
        if decision is Decision.REPLACE:
            raise ValueError("a scripted 'replace' needs {replace_with: text}")
        return SurfaceAnswer(decision, "scenario", "scenario")

    @property
    def remaining(self) -> int:
        """How many answers are left."""
        return len(self._pending)

    async def ask(self, request: ApprovalRequest) -> SurfaceAnswer | None:
        """The next scripted answer, or `None` once the script is exhausted.

        Args:
            request: the call; a script answers without looking at it.

        Returns:
            The next answer in order, or `None`.
        """
        return self._pending.popleft() if self._pending else None


class TerminalPrompter:
    """Asks the operator at the terminal: `[Y]es / [N]o / [A]lways for {tool}: `.

    `y`/`yes` is yes and `a`/`always` is always (case-insensitive, surrounding blanks ignored);
    anything else, including an empty line, end of input or a read error, is No. Only one
    question is on the terminal at a time.
    """

    def __init__(self, stream_in: TextIO | None = None, stream_out: TextIO | None = None) -> None:
        """Bind the prompter to its streams.

        Args:
            stream_in: where answers are read; `sys.stdin` (looked up when asking) if `None`.
            stream_out: where the summary and prompt go; `sys.stderr` if `None`, so stdout
                carries only the final answer.
        """
        self._stream_in = stream_in
        self._stream_out = stream_out
        self._lock = asyncio.Lock()
        self.decided_by = self._operator_name()
        """`terminal:{login name}`, or `terminal` when the login name is unknown."""

    @staticmethod
    def _operator_name() -> str:
        try:
            user = getpass.getuser()
        except Exception:  # OSError on 3.13+, KeyError/ImportError before: no name to give
            return "terminal"
        return f"terminal:{user}" if user else "terminal"

    @property
    def _input(self) -> TextIO:
        return self._stream_in if self._stream_in is not None else sys.stdin

    @property
    def _output(self) -> TextIO:
        return self._stream_out if self._stream_out is not None else sys.stderr

    def is_available(self) -> bool:
        """Whether a person can answer: true only when the input stream is a TTY.

        Returns:
            `False` for pipes, files, closed or missing streams.
        """
        stream = self._input
        try:
            return stream is not None and bool(stream.isatty())
        except (OSError, ValueError, AttributeError):
            return False

    async def ask(self, request: ApprovalRequest) -> SurfaceAnswer:
        """Print a summary of the call and the prompt, then read one line.

        The line is read in a daemon thread so other tasks keep running while the operator
        thinks, and a cancelled turn never waits for the operator to press Enter.

        Args:
            request: the call; its `arguments_summary` is already redacted.

        Returns:
            The operator's answer with surface `cli`; never `None` (a failed read is No).
        """
        tool = printable(request.display_tool)
        async with self._lock:
            self._write(describe_request(request) + PROMPT_TEMPLATE.format(tool=tool))
            line = await self._read_line()
        return SurfaceAnswer(self._parse(line), "cli", self.decided_by)

    def _write(self, text: str) -> None:
        try:
            self._output.write(text)
            self._output.flush()
        except (OSError, ValueError):
            pass  # The question could not be shown; the read below still decides (No on EOF).

    async def _read_line(self) -> str:
        # A daemon thread, not the loop's default executor: `asyncio.run` joins executor threads
        # at shutdown, so a Ctrl-C during the prompt would otherwise hang until Enter is pressed.
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[str] = loop.create_future()
        stream = self._input

        def deliver(line: str) -> None:
            if not answer.done():
                answer.set_result(line)

        def read() -> None:
            try:
                line = stream.readline()
            except (OSError, ValueError, UnicodeDecodeError, AttributeError):
                line = ""  # A read error is No (LIFECYCLE §5).
            with contextlib.suppress(RuntimeError):  # the loop may be closed by now
                loop.call_soon_threadsafe(deliver, line)

        threading.Thread(target=read, name="zeroclaw-approval-prompt", daemon=True).start()
        return await answer

    @staticmethod
    def _parse(line: str) -> Decision:
        answer = line.strip().lower()
        if answer in ("y", "yes"):
            return Decision.YES
        if answer in ("a", "always"):
            return Decision.ALWAYS
        return Decision.NO


BackchannelCallback = Callable[["ApprovalRequest"], Awaitable[SurfaceAnswer | None]]
"""Carries a request to a real operator (ACP/web) and returns the answer, or `None`."""


class Backchannel:
    """Asks a remote operator through a callback, under a deadline.

    A timeout, an exception, a wrong return type or `None` from the callback all mean the
    operator was unreachable, and `ask` returns `None` (the manager then denies by policy).
    """

    def __init__(
        self, callback: BackchannelCallback, timeout_s: float, *, surface: str = "backchannel"
    ) -> None:
        """Bind the callback and its deadline.

        Args:
            callback: the transport to the operator.
            timeout_s: how long the operator may take; usually
                `ApprovalConfig.backchannel_timeout_s`.
            surface: what the audit log and metrics call this surface: `backchannel` for an
                embedding application's callback, `web` for `serve`'s operator API.

        Raises:
            ValueError: `timeout_s` is not positive.
        """
        if not timeout_s > 0:
            raise ValueError(f"timeout_s must be positive, got {timeout_s!r}")
        self._callback = callback
        self.timeout_s = timeout_s
        """Seconds the operator may take before the runtime denies."""
        self.surface = surface
        """The audit log's `surface` for the answers this back-channel returns."""

    async def ask(self, request: ApprovalRequest) -> SurfaceAnswer | None:
        """Await the operator's answer for at most `timeout_s` seconds.

        Args:
            request: the call, with its arguments already redacted.

        Returns:
            The answer with this back-channel's `surface` (and `decided_by` the surface if the
            callback left it empty), or `None` when no decision arrived.
        """
        try:
            async with asyncio.timeout(self.timeout_s):
                answer = await self._callback(request)
        except TimeoutError:
            return None
        except Exception as exc:
            # The type only: an exception message may quote the arguments.
            _log.warning("approval back-channel failed: %s", type(exc).__name__)
            return None
        if not isinstance(answer, SurfaceAnswer):
            return None
        return replace(answer, surface=self.surface, decided_by=answer.decided_by or self.surface)
