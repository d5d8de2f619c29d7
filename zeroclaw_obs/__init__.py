"""zeroclaw-obs: an observability-first runtime for the tool-call loop of an LLM agent turn."""

from .config import RuntimeConfig
from .errors import BadInputError, ConfigError, ProviderError, ZeroclawError
from .receipts import ReceiptGenerator
from .redaction import Redactor
from .replay import Replay, build_replay
from .scenario import Scenario, load_scenario
from .tools import Tool, ToolResult, ToolSpec, tool
from .turn import ResolvedAgentExecution, TurnOutcome, TurnState, run_tool_call_loop

__version__ = "0.1.0"

__all__ = [
    "BadInputError",
    "ConfigError",
    "ProviderError",
    "ReceiptGenerator",
    "Redactor",
    "Replay",
    "ResolvedAgentExecution",
    "RuntimeConfig",
    "Scenario",
    "Tool",
    "ToolResult",
    "ToolSpec",
    "TurnOutcome",
    "TurnState",
    "ZeroclawError",
    "__version__",
    "build_replay",
    "load_scenario",
    "run_tool_call_loop",
    "tool",
]
