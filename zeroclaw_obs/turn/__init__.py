"""The turn engine: one user message from the first provider request to an end state."""

from .context import IterationBudget, ResolvedAgentExecution, TurnCancellation, TurnState
from .delegation import Subagent
from .events import TurnEvent, TurnEventLog
from .hooks import (
    CancelCall,
    Continue,
    HookCall,
    HookLlmCall,
    Hooks,
    RewriteCall,
    RewriteLlmCall,
    SwitchModel,
)
from .loop import TurnOutcome, run_tool_call_loop
from .model_switch import ModelSwitch, ModelSwitchRefused, request_model_switch
from .provider_call import RetryPolicy
from .steering import Steered, SteeringQueue

__all__ = [
    "CancelCall",
    "Continue",
    "HookCall",
    "HookLlmCall",
    "Hooks",
    "IterationBudget",
    "ModelSwitch",
    "ModelSwitchRefused",
    "ResolvedAgentExecution",
    "RetryPolicy",
    "RewriteCall",
    "RewriteLlmCall",
    "Steered",
    "SteeringQueue",
    "Subagent",
    "SwitchModel",
    "TurnCancellation",
    "TurnEvent",
    "TurnEventLog",
    "TurnOutcome",
    "TurnState",
    "request_model_switch",
    "run_tool_call_loop",
]
