"""Observability: typed observer events, the `Observer` interface and the progress lines.

`events` and `observer` import no telemetry library; exporters live in their own modules.
"""

from .events import (
    CALL_CANCELLED,
    AgentEnd,
    AgentStart,
    ApprovalDecision,
    ContextTrimmed,
    Correlation,
    LlmRequest,
    LlmResponse,
    LoopDetection,
    ModelSwitched,
    ObserverEvent,
    ProviderAttempt,
    SteeringMessages,
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
    "ContextTrimmed",
    "Correlation",
    "LlmRequest",
    "LlmResponse",
    "LoopDetection",
    "ModelSwitched",
    "MultiObserver",
    "NoopObserver",
    "Observer",
    "ObserverEvent",
    "ProgressObserver",
    "ProviderAttempt",
    "SteeringMessages",
    "ToolCall",
    "ToolCallStart",
    "ToolOutcome",
    "TurnOutcomeKind",
]
