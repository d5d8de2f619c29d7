"""Observability: typed observer events, the `Observer` interface and the progress lines.

`events` and `observer` import no telemetry library; exporters live in their own modules.
"""

from .events import (
    CALL_CANCELLED,
    AgentEnd,
    AgentStart,
    ApprovalDecision,
    Correlation,
    LlmRequest,
    LlmResponse,
    LoopDetection,
    ObserverEvent,
    ProviderAttempt,
    ToolCall,
    ToolCallStart,
    ToolOutcome,
    TurnOutcomeKind,
)
from .observer import MultiObserver, NoopObserver, Observer
from .progress import ProgressObserver

__all__ = [
    "CALL_CANCELLED",
    "AgentEnd",
    "AgentStart",
    "ApprovalDecision",
    "Correlation",
    "LlmRequest",
    "LlmResponse",
    "LoopDetection",
    "MultiObserver",
    "NoopObserver",
    "Observer",
    "ObserverEvent",
    "ProgressObserver",
    "ProviderAttempt",
    "ToolCall",
    "ToolCallStart",
    "ToolOutcome",
    "TurnOutcomeKind",
]
