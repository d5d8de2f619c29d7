"""The approval policy: which calls need a decision, who gives it, and what it means.

This module owns LIFECYCLE §5 above the surfaces: the requirement rules, the order in which
surfaces are asked, the session allowlist, the runtime denial, the sanitising of replacements
and the audit entry of every decision. The approval gate in `turn/approval_gate.py` calls
`requirement` for each call and `decide` for the ones that need a prompt.

Surfaces are asked in this order: the scripted answers from `config.answers` first, whatever the
mode; then, by mode, the terminal (`interactive`, only on a real TTY), the back-channel
(`backchannel`), or nobody (`non_interactive`). When no surface gives a decision the runtime
denies the call by policy (surface `runtime`, decided by `runtime-policy`) with the exact
runtime-denial text, which tells the model that no user said No.

`autonomy: read_only` means read-only: a tool that declares `read_only` (a `Tool.read_only`
attribute, an MCP `readOnlyHint: true`) runs with no prompt, and every other call is denied by
policy with the read-only denial text, audited like any runtime denial. `requirement` reports
such a call as `PROMPT` and `decide` denies it without asking any surface, so a caller that
only checks for `PROMPT` still cannot run it, and no scripted answer is consumed.

MCP tools (DESIGN §7): a call to an MCP tool carries the annotations its server listed.
A guarded tool — one that declares `destructiveHint: true`, or that declares neither
`readOnlyHint: true` nor `destructiveHint: false` (no annotations at all included, following
MCP's default `destructiveHint: true`) — runs with no prompt only when `auto_approve` names it
exactly or an operator answered `always` for it by name: the group rule `auto_approve: ["*"]`
does not cover it (autonomy `full` still runs everything, as it says). With
`auto_approve_read_only: true`, an MCP tool that declares `readOnlyHint: true` is approved as
a group, after the by-name rules. Choice: a tool that declares both `readOnlyHint: true` and
`destructiveHint: true` contradicts itself and is treated as destructive everywhere here,
`autonomy: read_only` included. Built-in and scripted tools keep every rule as it was.

Choice: in `interactive` mode with no scripted answer left and no TTY (or no terminal
configured), the runtime denies rather than reading a pipe or treating silence as the user's
No, because nobody was asked.

Risky parts: the session allowlist lives on this manager only, in memory, and is never
persisted; a new manager starts empty. `decide` writes the audit entry synchronously right
after the answer arrives, with no await in between, so a cancellation cannot separate a decision
from its audit entry; a turn cancelled while a surface is still waiting has no decision and
nothing to audit.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from ..config import ApprovalAutonomy, ApprovalConfig, ApprovalMode
from .audit import AuditEntry, AuditLog, rfc3339_utc
from .surfaces import (
    Backchannel,
    Decision,
    ScriptedAnswers,
    SurfaceAnswer,
    TerminalPrompter,
    sanitize_replacement,
)

__all__ = [
    "DENIED_BY_USER",
    "READ_ONLY_DENIAL_TEMPLATE",
    "RUNTIME_DENIAL_TEMPLATE",
    "RUNTIME_POLICY",
    "ApprovalManager",
    "ApprovalOutcome",
    "ApprovalRequest",
    "Requirement",
    "read_only_denial_text",
    "runtime_denial_text",
]

DENIED_BY_USER = "Denied by user."
"""The slot text of an operator's No, exact (LIFECYCLE §5)."""

RUNTIME_DENIAL_TEMPLATE = (
    "Tool call not executed: '{tool}' requires approval and no operator decision was available,"
    " so the runtime denied it by policy. This was not a user's decision."
)
"""The slot text of a runtime denial, exact (LIFECYCLE §5)."""

RUNTIME_POLICY = "runtime-policy"
"""The `decided_by` of a runtime denial."""

READ_ONLY_DENIAL_TEMPLATE = (
    "Tool call not executed: '{tool}' is not read-only and autonomy is read_only."
)
"""The slot text of a call denied because autonomy is `read_only`, exact."""


def runtime_denial_text(tool: str) -> str:
    """The model-visible text of a runtime denial for `tool`.

    Args:
        tool: the tool name, quoted as the model called it.

    Returns:
        `RUNTIME_DENIAL_TEMPLATE` filled in.
    """
    return RUNTIME_DENIAL_TEMPLATE.format(tool=tool)


def read_only_denial_text(tool: str) -> str:
    """The model-visible text of a call denied because autonomy is `read_only`.

    Args:
        tool: the tool name, quoted as the model called it.

    Returns:
        `READ_ONLY_DENIAL_TEMPLATE` filled in.
    """
    return READ_ONLY_DENIAL_TEMPLATE.format(tool=tool)


def _hint(annotations: Mapping[str, Any], key: str) -> bool | None:
    """A boolean hint as declared; any other value declares nothing (as `read_only_hint`)."""
    value = annotations.get(key) if isinstance(annotations, Mapping) else None
    return value if isinstance(value, bool) else None


def _mcp_destructive(annotations: Mapping[str, Any]) -> bool:
    """Declares `destructiveHint: true`, whatever else it declares."""
    return _hint(annotations, "destructiveHint") is True


def _mcp_read_only(annotations: Mapping[str, Any]) -> bool:
    """Declares `readOnlyHint: true` and not `destructiveHint: true` (a contradiction counts
    as destructive)."""
    return _hint(annotations, "readOnlyHint") is True and not _mcp_destructive(annotations)


def _mcp_guarded(annotations: Mapping[str, Any]) -> bool:
    """Needs a by-name approval: destructive, or neither read-only nor declared
    `destructiveHint: false` (MCP's default for a tool that is not read-only is destructive,
    so no annotations at all is guarded)."""
    if _mcp_destructive(annotations):
        return True
    if _mcp_read_only(annotations):
        return False
    return _hint(annotations, "destructiveHint") is not False


def _mcp_verdict(annotations: Mapping[str, Any]) -> str:
    """What the annotations amount to, for an operator."""
    if _mcp_destructive(annotations):
        return "destructive"
    if _mcp_read_only(annotations):
        return "read-only"
    if _hint(annotations, "destructiveHint") is False:
        return "not destructive"
    if not annotations:
        return "no annotations"
    return "may be destructive"


class Requirement(StrEnum):
    """What a tool call needs before it may run."""

    APPROVED = "approved"
    """Approved by policy (autonomy `full`, `auto_approve`, session allowlist); not audited."""

    NOT_REQUIRED = "not_required"
    """No approval applies (a read-only tool under autonomy `read_only`, non-interactive shell
    when allowed)."""

    PROMPT = "prompt"
    """Someone must decide: call `ApprovalManager.decide` (which denies by policy a tool that
    is not read-only under autonomy `read_only`)."""


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """One call waiting for a decision, as surfaces and the audit log see it."""

    tool: str
    """The tool name after preparation hooks: the allowlist and the slot texts use it."""

    arguments_summary: str
    """The complete arguments as one JSON object, deciding arguments first: what the audit
    entry records and a back-channel operator reads. The caller redacts them; never cut."""

    turn_id: str
    """The turn the call belongs to (a delegated turn's own id for a sub-agent's call)."""

    tool_call_id: str
    """The call id the model gave."""

    top_turn_id: str | None = None
    """For a sub-agent's call: the top-level turn its delegated turn runs inside, the one a
    client started and a surface lists the call under; None when `turn_id` is top-level."""

    subagent: str | None = None
    """For a sub-agent's call: the sub-agent's shown alias; None for a top-level turn."""

    arguments: Mapping[str, Any] | None = None
    """The same redacted arguments as a mapping in display order (`primary` first), for a
    surface that renders them one by one (the terminal); None when only the summary is known."""

    primary: tuple[str, ...] = ()
    """The keys of `arguments` that decide the call (`command` for `shell`; every key when
    the gate knows none for the tool); a surface shows them first and whole, never
    shortened, and may bound only the others."""

    shown_tool: str | None = None
    """The tool name as an operator is shown it and the audit records it: the redacted form
    of an operator-chosen name. None means `tool` as it is."""

    server: str | None = None
    """The MCP server of the tool, None for any other tool: the prompt and the audit entry
    show it."""

    annotations: Mapping[str, Any] | None = None
    """For an MCP tool: its standard hints only (`turn.approval_gate.STANDARD_HINTS`:
    booleans as declared, `title` already redacted), `{}` when it declares none; None for
    any other tool."""

    @property
    def mcp_verdict(self) -> str | None:
        """For an MCP tool, what its annotations amount to: `destructive`, `read-only`,
        `not destructive`, `no annotations` or `may be destructive` (annotations that declare
        neither hint); None for any other tool."""
        if self.server is None:
            return None
        return _mcp_verdict(self.annotations or {})

    @property
    def display_tool(self) -> str:
        """The name surfaces show and the audit entry records: `shown_tool`, else `tool`."""
        return self.tool if self.shown_tool is None else self.shown_tool


@dataclass(frozen=True, slots=True)
class ApprovalOutcome:
    """The decision on one call and what the approval gate does with it.

    `approved` is true for `yes` and `always` only. For `replace` the tool does not run and
    `replacement` becomes a successful synthetic result (no receipt); for `no` it does not run
    and `slot_text` is the failed slot's text.
    """

    approved: bool
    """Whether the tool may run."""

    decision: Decision
    """What was decided; a runtime denial is `no`."""

    surface: str
    """`cli`, `scenario`, `backchannel`, `web`, or `runtime` for a runtime denial."""

    decided_by: str
    """The operator, `scenario`, or `runtime-policy`."""

    replacement: str | None = None
    """For `replace`: the sanitised text the model reads as the tool's successful result."""

    slot_text: str | None = None
    """For denials: `Denied by user.` or the runtime-denial text, exact."""

    runtime_denied: bool = False
    """True when nobody decided and the runtime denied by policy."""


class ApprovalManager:
    """Applies one `ApprovalConfig` to the calls of a session and remembers `always` answers.

    One manager serves one session (a CLI run, one channel conversation): its scripted
    answers are consumed across turns and its session allowlist lasts as long as it does.
    """

    def __init__(
        self,
        config: ApprovalConfig,
        *,
        audit: AuditLog | None = None,
        terminal: TerminalPrompter | None = None,
        backchannel: Backchannel | None = None,
    ) -> None:
        """Set up the surfaces for `config.mode`.

        Args:
            config: the approval policy; `config.answers` are replayed before any surface.
            audit: where decisions are recorded; a fresh `AuditLog` if `None`.
            terminal: the interactive prompt; with `None`, interactive mode has no terminal
                and a call that needs a prompt is denied by the runtime once the scripted
                answers run out. The CLI passes `TerminalPrompter()`.
            backchannel: the operator back-channel for `backchannel` mode; with `None`,
                that mode denies by policy.

        Raises:
            ValueError: `config.answers` holds an answer `ScriptedAnswers` cannot replay.
        """
        self._config = config
        self._audit = audit if audit is not None else AuditLog()
        self._scripted = ScriptedAnswers(config.answers)
        self._terminal = terminal
        self._backchannel = backchannel
        self._allowlist: set[str] = set()

    @property
    def config(self) -> ApprovalConfig:
        """The policy this manager applies."""
        return self._config

    def under(self, config: ApprovalConfig) -> ApprovalManager:
        """This session's manager applying `config` instead (a sub-agent's stricter policy).

        Everything but the policy is shared, not copied: the scripted answers still to be
        replayed, the surfaces, the audit log and the session allowlist (an `always` given
        in either applies to both). A shallow copy, so a subclass stays what it is.
        """
        other = copy.copy(self)
        other._config = config
        return other

    @property
    def audit(self) -> AuditLog:
        """The log every decision is appended to."""
        return self._audit

    @property
    def session_allowlist(self) -> frozenset[str]:
        """A snapshot of the tools answered `always` in this session (in memory only)."""
        return frozenset(self._allowlist)

    def requirement(
        self,
        tool: str,
        *,
        read_only: bool = False,
        mcp_annotations: Mapping[str, Any] | None = None,
    ) -> Requirement:
        """What a call to `tool` needs; the first matching rule of LIFECYCLE §5 wins.

        The rules, in order: autonomy `full` → approved; `read_only` → not required for a
        read-only tool, else prompt (and `decide` denies it by policy); `always_ask` has the
        tool or `*` → prompt; non-interactive `shell` with
        `non_interactive_shell_requires_approval` off → not required; `auto_approve` has the
        tool (or `*`, except for a guarded MCP tool) → approved; the session allowlist has
        the tool → approved; `auto_approve_read_only` and an MCP tool that declares
        `readOnlyHint: true` (not `destructiveHint: true`) → approved; else prompt.

        Args:
            tool: the tool name, matched exactly.
            read_only: the resolved tool declares itself read-only (`Tool.read_only`). Left
                out, the tool counts as not read-only: the safe side.
            mcp_annotations: the annotations of an MCP tool as its server listed them (`{}`
                for none); None for any other tool. An MCP tool that declares
                `destructiveHint: true` is not read-only here, whatever else it declares.

        Returns:
            The requirement.
        """
        config = self._config
        mcp = mcp_annotations
        if mcp is not None and _mcp_destructive(mcp):
            read_only = False
        if config.autonomy is ApprovalAutonomy.FULL:
            return Requirement.APPROVED
        if config.autonomy is ApprovalAutonomy.READ_ONLY:
            return Requirement.NOT_REQUIRED if read_only else Requirement.PROMPT
        if tool in config.always_ask or "*" in config.always_ask:
            return Requirement.PROMPT
        if (
            config.mode is ApprovalMode.NON_INTERACTIVE
            and tool == "shell"
            and not config.non_interactive_shell_requires_approval
        ):
            return Requirement.NOT_REQUIRED
        if tool in config.auto_approve:
            return Requirement.APPROVED
        if "*" in config.auto_approve and (mcp is None or not _mcp_guarded(mcp)):
            return Requirement.APPROVED
        if tool in self._allowlist:
            return Requirement.APPROVED
        if config.auto_approve_read_only and mcp is not None and _mcp_read_only(mcp):
            return Requirement.APPROVED
        return Requirement.PROMPT

    async def decide(self, request: ApprovalRequest) -> ApprovalOutcome:
        """Get a decision for a prompt-required call, apply it and audit it.

        Call it only when `requirement` returned `PROMPT`. Under autonomy `read_only` nobody
        is asked: the call is denied by policy with `read_only_denial_text`. An `always`
        answer adds the tool to the session allowlist; a `replace` answer's text is sanitised
        with `sanitize_replacement`. Every outcome, runtime denials included, is appended to
        the audit log.

        Args:
            request: the call, with its arguments already redacted.

        Returns:
            The outcome for the approval gate.
        """
        if self._config.autonomy is ApprovalAutonomy.READ_ONLY:
            outcome = self._runtime_denial(read_only_denial_text(request.tool))
        else:
            answer = await self._scripted.ask(request)
            if answer is None:
                answer = await self._ask_mode_surface(request)
            if answer is None:
                outcome = self._runtime_denial(runtime_denial_text(request.tool))
            else:
                outcome = self._apply(request, answer)
        self._record(request, outcome)
        return outcome

    async def _ask_mode_surface(self, request: ApprovalRequest) -> SurfaceAnswer | None:
        mode = self._config.mode
        if mode is ApprovalMode.INTERACTIVE:
            if self._terminal is not None and self._terminal.is_available():
                return await self._terminal.ask(request)
            return None
        if mode is ApprovalMode.BACKCHANNEL and self._backchannel is not None:
            return await self._backchannel.ask(request)
        return None

    def _apply(self, request: ApprovalRequest, answer: SurfaceAnswer) -> ApprovalOutcome:
        decision = answer.decision
        if decision is Decision.ALWAYS:
            self._allowlist.add(request.tool)
        if decision is Decision.REPLACE:
            return ApprovalOutcome(
                approved=False,
                decision=decision,
                surface=answer.surface,
                decided_by=answer.decided_by,
                replacement=sanitize_replacement(answer.replacement or ""),
            )
        approved = decision in (Decision.YES, Decision.ALWAYS)
        return ApprovalOutcome(
            approved=approved,
            decision=decision,
            surface=answer.surface,
            decided_by=answer.decided_by,
            slot_text=None if approved else DENIED_BY_USER,
        )

    @staticmethod
    def _runtime_denial(slot_text: str) -> ApprovalOutcome:
        return ApprovalOutcome(
            approved=False,
            decision=Decision.NO,
            surface="runtime",
            decided_by=RUNTIME_POLICY,
            slot_text=slot_text,
            runtime_denied=True,
        )

    def _record(self, request: ApprovalRequest, outcome: ApprovalOutcome) -> None:
        self._audit.append(
            AuditEntry(
                timestamp=rfc3339_utc(datetime.now(UTC)),
                turn_id=request.turn_id,
                tool_call_id=request.tool_call_id,
                tool=request.display_tool,
                arguments_summary=request.arguments_summary,
                decision=str(outcome.decision),
                surface=outcome.surface,
                decided_by=outcome.decided_by,
                server=request.server,
                annotations=request.annotations,
            )
        )
