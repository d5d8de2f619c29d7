"""The turn engine: one user message from the first provider request to an end state."""

from .context import ResolvedAgentExecution, TurnCancellation, TurnState
from .events import TurnEvent, TurnEventLog
from .hooks import CancelCall, Continue, HookCall, Hooks, RewriteCall
from .loop import TurnOutcome, run_tool_call_loop
from .provider_call import RetryPolicy

__all__ = [
    "CancelCall",
    "Continue",
    "HookCall",
    "Hooks",
    "ResolvedAgentExecution",
    "RetryPolicy",
    "RewriteCall",
    "TurnCancellation",
    "TurnEvent",
    "TurnEventLog",
    "TurnOutcome",
    "TurnState",
    "run_tool_call_loop",
]
