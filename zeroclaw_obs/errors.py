"""Every exception zeroclaw-obs raises, in one place.

Expected outcomes are values (`ToolResult`, the `ToolOutcome` of a slot, `TurnOutcome`);
exceptions are for bad input, bugs and the control flow the loop must see.

    ZeroclawError
    ├── BadInputError                 bad input from a user or an operator  → exit code 2
    │   ├── ConfigError               a config or scenario file is invalid
    │   ├── ScenarioExhaustedError    a scripted model ran out of responses
    │   └── ToolDefinitionError       a function cannot become a tool
    └── ProviderError                 the model backend failed                → exit code 3
        ├── ProviderHTTPError         it answered with an HTTP error status (429, 5xx, 4xx)
        │   └── ProviderContextOverflowError  the prompt does not fit the model's context window
        ├── ProviderTimeoutError      connect or read timed out
        ├── ProviderConnectionError   no connection, or it dropped mid-response
        └── ProviderResponseError     it answered, but not in its documented wire format

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
    "CONTEXT_LENGTH_EXCEEDED",
    "BadInputError",
    "ConfigError",
    "ProviderConnectionError",
    "ProviderContextOverflowError",
    "ProviderError",
    "ProviderHTTPError",
    "ProviderResponseError",
    "ProviderTimeoutError",
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
    """Raised by a provider when its backend fails; the turn ends as `error` after retries.

    Backend errors are translated once, at the provider seam, into one of the subclasses; the
    retry policy (`turn/`) reads `retryable` and `retry_after`, never the backend's exception.
    The message is `line()`: provider, status and error type only. It never holds the request
    body, the prompt, the response body or the key, so it may be printed and exported as is.
    """

    retryable: bool = False
    """Whether the same request may succeed if sent again (429, 5xx, connect errors)."""

    def __init__(
        self,
        provider: str,
        error_type: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        self.provider = provider
        """The provider's (redacted) name, as on spans."""
        self.error_type = error_type
        """A short machine word: the backend's error type (`rate_limit_error`,
        `overloaded_error`) when it sent one from a fixed vocabulary, else ours
        (`http_500`, `timeout`, `connect_error`, `invalid_response`)."""
        self.status = status
        """The HTTP status, when the backend answered with one."""
        self.retry_after = retry_after
        """Seconds the backend asked us to wait (`Retry-After`), when it did."""
        super().__init__(self.line())

    def line(self) -> str:
        """`provider 'openai': HTTP 429 rate_limit_error` — the one line a user sees."""
        status = f"HTTP {self.status} " if self.status is not None else ""
        return f"provider {self.provider!r}: {status}{self.error_type}"


class ProviderHTTPError(ProviderError):
    """Raised when the backend answers with an error status; 429 and 5xx are retryable."""

    def __init__(
        self,
        provider: str,
        error_type: str,
        *,
        status: int,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(provider, error_type, status=status, retry_after=retry_after)
        self.retryable = status == 429 or status >= 500


CONTEXT_LENGTH_EXCEEDED = "context_length_exceeded"
"""The `error_type` of every `ProviderContextOverflowError`."""


class ProviderContextOverflowError(ProviderHTTPError):
    """Raised when the backend refuses the request because the prompt exceeds the model's
    context window (OpenAI `context_length_exceeded`, Anthropic `prompt is too long`).

    Not retryable as it is: the loop drops the oldest whole turns and sends it again once
    (`turn/context_window.py`). `error_type` is always `context_length_exceeded`, whatever
    word the backend used, so every provider's overflow reads the same in the error line.
    """

    def __init__(self, provider: str, *, status: int = 400) -> None:
        super().__init__(provider, CONTEXT_LENGTH_EXCEEDED, status=status)
        self.retryable = False  # the same prompt overflows again, whatever the status


class ProviderTimeoutError(ProviderError):
    """Raised when connecting or reading passes `timeout_s`; retryable."""

    retryable = True


class ProviderConnectionError(ProviderError):
    """Raised when no connection could be made, or it dropped mid-response; retryable."""

    retryable = True


class ProviderResponseError(ProviderError):
    """Raised when the backend's answer is not in its documented wire format; not retried."""


class TurnControl(BaseException):
    """Base of the decisions that unwind a turn; not an error, so not an `Exception`."""


class TurnAborted(TurnControl):
    """Raised when a lifecycle step decides the turn must stop; the caller ends it as aborted.

    `message` is the exact text the user sees (LIFECYCLE.md quotes each one).
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
