"""Approval: the policy that decides whether a prompt-required tool call may run (LIFECYCLE §5).

`ApprovalManager` applies an `ApprovalConfig`: the requirement rules, the surfaces (scripted
answers, the terminal, an operator back-channel), the session allowlist, runtime denials and the
audit log written by `--audit-out`. Approval is a pre-execution control, never a receipt.
"""

from __future__ import annotations

from .audit import AUDIT_DECISIONS, AUDIT_SURFACES, AuditEntry, AuditLog, rfc3339_utc
from .manager import (
    DENIED_BY_USER,
    RUNTIME_DENIAL_TEMPLATE,
    RUNTIME_POLICY,
    ApprovalManager,
    ApprovalOutcome,
    ApprovalRequest,
    Requirement,
    runtime_denial_text,
)
from .surfaces import (
    MAX_REPLACEMENT_BYTES,
    PROMPT_TEMPLATE,
    Backchannel,
    BackchannelCallback,
    Decision,
    ScriptedAnswers,
    Surface,
    SurfaceAnswer,
    TerminalPrompter,
    sanitize_replacement,
)

__all__ = [
    "AUDIT_DECISIONS",
    "AUDIT_SURFACES",
    "DENIED_BY_USER",
    "MAX_REPLACEMENT_BYTES",
    "PROMPT_TEMPLATE",
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
    "rfc3339_utc",
    "runtime_denial_text",
    "sanitize_replacement",
]
