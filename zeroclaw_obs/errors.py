"""Every exception zeroclaw-obs raises, in one place.

Expected outcomes are values (`ToolResult`, the `ToolOutcome` of a slot, `TurnOutcome`);
exceptions are for bad input, bugs and the control flow the loop must see.

    ZeroclawError
    ├── BadInputError                 bad input from a user or an operator  → exit code 2
    │   ├── ConfigError               a config or scenario file is invalid
    │   ├── ScenarioExhaustedError    a scripted model ran out of responses
    │   └── ToolDefinitionError       a function cannot become a tool
    └── ProviderError                 the model backend failed                → exit code 3

    TurnControl (BaseException: a decision, not an error)
    └── TurnAborted                   the loop must stop the turn now         → exit code 3

`cli.py` maps them to exit codes in one place; cancellation is asyncio's own
`CancelledError` and ends as exit code 130.

A bad-input message is one line that names the file (or flag), the field path and the problem,
and never quotes the input: not a value, not a key (a key that is not one of our field names is
shown by its position, `<key 2>`), not a fragment a parser quoted. Loading a scenario or config
file (`load_scenario`, `parse_scenario`, `load_config_file`, `build_redactor`) raises
`ConfigError` and nothing else, whatever the input.
"""

from __future__ import annotations

__all__ = [
    "BadInputError",
    "ConfigError",
    "ProviderError",
    "ScenarioExhaustedError",
    "ToolDefinitionError",
    "TurnAborted",
    "TurnControl",
    "ZeroclawError",
]


class ZeroclawError(Exception):
    """Base of every error zeroclaw-obs raises."""


class BadInputError(ZeroclawError):
    """Raised when input from a user or operator is invalid; the message is one line."""


class ConfigError(BadInputError):
    """Raised when a config or scenario file fails to load; names file, field and problem only."""


class ScenarioExhaustedError(BadInputError):
    """Raised when a scripted provider is asked for more responses than its scenario has."""


class ToolDefinitionError(BadInputError):
    """Raised at decoration time when a function cannot be a tool; lists every problem."""


class ProviderError(ZeroclawError):
    """Raised by a provider when its backend fails; the turn ends as `error`."""


class TurnControl(BaseException):
    """Base of the decisions that unwind a turn; not an error, so not an `Exception`."""


class TurnAborted(TurnControl):
    """Raised when a lifecycle step decides the turn must stop; the caller ends it as aborted.

    `message` is the exact text the user sees (LIFECYCLE.md quotes each one).
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
