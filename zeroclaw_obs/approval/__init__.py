"""Approval: the policy that decides whether a prompt-required tool call may run (LIFECYCLE §5).

`ApprovalManager` applies an `ApprovalConfig`: the requirement rules, the surfaces (scripted
answers, the terminal, an operator back-channel), the session allowlist, runtime denials and the
audit log written by `--audit-out`. Approval is a pre-execution control, never a receipt.
"""

from __future__ import annotations

from .audit import AUDIT_DECISIONS, AUDIT_SURFACES, AuditEntry, AuditLog, rfc3339_utc
from .manager import (
    DENIED_BY_USER,
    READ_ONLY_DENIAL_TEMPLATE,
    RUNTIME_DENIAL_TEMPLATE,
    RUNTIME_POLICY,
    ApprovalManager,
    ApprovalOutcome,
    ApprovalRequest,
    Requirement,
    read_only_denial_text,
    runtime_denial_text,
)
from .surfaces import (
    MAX_REPLACEMENT_BYTES,
    PROMPT_TEMPLATE,
    PROMPT_WIDTH,
    REST_DISPLAY_LIMIT,
    Backchannel,
    BackchannelCallback,
    Decision,
    ScriptedAnswers,
    Surface,
    SurfaceAnswer,
    TerminalPrompter,
    describe_request,
    sanitize_replacement,
)

__all__ = [
    "AUDIT_DECISIONS",
    "AUDIT_SURFACES",
    "DENIED_BY_USER",
    "MAX_REPLACEMENT_BYTES",
    "PROMPT_TEMPLATE",
    "PROMPT_WIDTH",
    "READ_ONLY_DENIAL_TEMPLATE",
    "REST_DISPLAY_LIMIT",
    "RUNTIME_DENIAL_TEMPLATE",
    "RUNTIME_POLICY",
    "ApprovalManager",
    "ApprovalOutcome",
    "ApprovalRequest",
    "AuditEntry",
    "AuditLog",
    "Backchannel",
    "BackchannelCallback",
    "Decision",
    "Requirement",
    "ScriptedAnswers",
    "Surface",
    "SurfaceAnswer",
    "TerminalPrompter",
    "describe_request",
    "read_only_denial_text",
    "rfc3339_utc",
    "runtime_denial_text",
    "sanitize_replacement",
]
