"""zeroclaw-obs: an observability-first runtime for the tool-call loop of an LLM agent turn.

The public names below are imported on first use (PEP 562), not with the package: the console
script (`_entry.py`) must own SIGINT and SIGTERM before the heavy imports (OpenTelemetry,
pydantic, RE2) run, and importing any submodule imports this file first.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .config import RuntimeConfig
    from .errors import BadInputError, ConfigError, ProviderError, ZeroclawError
    from .receipts import ReceiptGenerator
    from .redaction import Redactor
    from .replay import Replay, build_replay
    from .scenario import Scenario, load_scenario
    from .tools import Tool, ToolResult, ToolSpec, tool
    from .turn import ResolvedAgentExecution, TurnOutcome, TurnState, run_tool_call_loop

__version__ = "0.1.0"

_LAZY: dict[str, str] = {
    "BadInputError": ".errors",
    "ConfigError": ".errors",
    "ProviderError": ".errors",
    "ReceiptGenerator": ".receipts",
    "Redactor": ".redaction",
    "Replay": ".replay",
    "ResolvedAgentExecution": ".turn",
    "RuntimeConfig": ".config",
    "Scenario": ".scenario",
    "Tool": ".tools",
    "ToolResult": ".tools",
    "ToolSpec": ".tools",
    "TurnOutcome": ".turn",
    "TurnState": ".turn",
    "ZeroclawError": ".errors",
    "build_replay": ".replay",
    "load_scenario": ".scenario",
    "run_tool_call_loop": ".turn",
    "tool": ".tools",
}

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


def __getattr__(name: str) -> Any:
    """Import a public name's module on first use and cache the name on the package."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
