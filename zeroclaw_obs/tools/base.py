"""Tool definition: what a developer writes (`Tool`) and what the model sees (`ToolSpec`).

This module owns the first lifecycle step. A tool is a name, a description, a JSON schema and
an async `execute`. Tools never log, approve, observe or sign anything themselves: the
dispatcher in `turn/dispatch.py` does all of that around them.

A tool declares `read_only = True` when it never changes anything outside the turn (it reads,
looks up, searches). Under `autonomy: read_only` only such tools run; every other call is denied
by policy (see `approval/manager.py`). Undeclared means not read-only: the safe default.

Risky parts: `@tool` derives the JSON schema from type hints with pydantic's `create_model`.
That is done once, at decoration time, and a mistake in the definition fails at import with one
`ToolDefinitionError` that lists every problem. A synchronous `@tool` function runs in a worker
thread (`tools/_workers.py`), never on the event loop, so a blocking one stalls neither the loop,
nor its parallel siblings, nor its own timeout; but a timed-out or cancelled sync function keeps
running in its thread until it returns, because Python cannot stop a thread.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, get_type_hints

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from ..errors import ToolDefinitionError
from ._schema import SchemaValidator
from ._workers import run_blocking

__all__ = [
    "ArgumentError",
    "FunctionTool",
    "Provenance",
    "Tool",
    "ToolResult",
    "ToolSpec",
    "tool",
]


class Provenance(StrEnum):
    """Where a tool comes from; unknown origins are treated as `extension`."""

    NATIVE = "native"
    EXTENSION = "extension"


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolSpec:
    """What the model sees of a tool: the provider request carries these."""

    name: str
    """The stable name the model calls the tool by."""

    description: str
    """One paragraph the model reads to decide when to call the tool."""

    parameters: dict[str, Any]
    """JSON schema (type `object`) of the arguments."""


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The value a tool returns. A failed result is an expected outcome, not an exception."""

    success: bool
    output: str
    error: str | None = None

    @classmethod
    def ok(cls, text: str) -> ToolResult:
        """A successful result carrying `text`."""
        return cls(success=True, output=text, error=None)

    @classmethod
    def fail(cls, error: str) -> ToolResult:
        """A failed result whose `error` the model will read."""
        return cls(success=False, output="", error=error)


@dataclass(frozen=True, slots=True)
class ArgumentError:
    """Arguments that violate a tool's schema; the model reads `message`."""

    message: str


class Tool(ABC):
    """Base class of every tool the engine can dispatch.

    Subclasses set `name`, `description`, `provenance` and, for a tool that never changes
    anything, `read_only = True`; they implement `parameters_schema` and `execute`.
    `validate_arguments` checks arguments against the schema before dispatch; the dispatcher
    turns an `ArgumentError` into the failed result `Error: invalid arguments: …` and never
    calls `execute`.
    """

    name: str
    description: str = ""
    provenance: Provenance = Provenance.NATIVE
    read_only: bool = False
    """True when the tool never changes anything (files, processes, remote state); only such
    tools run under `autonomy: read_only`. Read by the approval requirement."""

    @abstractmethod
    def parameters_schema(self) -> dict[str, Any]:
        """The JSON schema of the arguments (type `object`)."""

    @abstractmethod
    async def execute(self, args: dict[str, Any]) -> ToolResult:
        """Run the tool with validated `args`. May raise: the dispatcher records it."""

    def validate_arguments(self, args: dict[str, Any]) -> dict[str, Any] | ArgumentError:
        """Return the arguments to dispatch, or an `ArgumentError` the model can read."""
        validator = self.__dict__.get("_validator")
        if validator is None:
            validator = SchemaValidator(self.parameters_schema())
            self.__dict__["_validator"] = validator
        problem = validator.first_error(args)
        return args if problem is None else ArgumentError(problem)

    @property
    def spec(self) -> ToolSpec:
        """The `ToolSpec` offered to the model."""
        return ToolSpec(
            name=self.name, description=self.description, parameters=self.parameters_schema()
        )


ToolFunction = Callable[..., Awaitable[Any] | Any]


@dataclass(kw_only=True)
class FunctionTool(Tool):
    """A tool built by `@tool` from a plain (async or sync) function.

    An `async def` function runs on the event loop. Any other function runs in a worker thread
    (`run_blocking`), in a copy of the caller's context, so the span current during the call is
    the same in both; an awaitable it returns is then awaited on the loop.
    """

    name: str
    description: str
    function: ToolFunction
    model: type[BaseModel]
    schema: dict[str, Any]
    provenance: Provenance = Provenance.NATIVE
    read_only: bool = False
    takes_kwargs: bool = field(default=True)
    runs_on_loop: bool = field(init=False)
    """True for a coroutine function; False sends each call to a worker thread."""

    def __post_init__(self) -> None:
        self.runs_on_loop = inspect.iscoroutinefunction(self.function)

    def parameters_schema(self) -> dict[str, Any]:
        return self.schema

    def validate_arguments(self, args: dict[str, Any]) -> dict[str, Any] | ArgumentError:
        try:
            validated = self.model.model_validate(args)
        except ValidationError as exc:
            return ArgumentError(_describe_validation_error(exc))
        return {name: getattr(validated, name) for name in type(validated).model_fields}

    async def execute(self, args: dict[str, Any]) -> ToolResult:
        if self.runs_on_loop:
            value = await self.function(**args)
        else:
            value = await run_blocking(self.function, **args)
            if inspect.isawaitable(value):
                value = await value
        if isinstance(value, ToolResult):
            return value
        return ToolResult.ok("" if value is None else str(value))

    async def __call__(self, **kwargs: Any) -> ToolResult:
        """Call the tool directly (tests, scripts): validates, then executes."""
        args = self.validate_arguments(kwargs)
        if isinstance(args, ArgumentError):
            return ToolResult.fail(f"invalid arguments: {args.message}")
        return await self.execute(args)


def _describe_validation_error(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(p) for p in error["loc"]) or "arguments"
        parts.append(f"{where}: {error['msg']}")
    return "; ".join(parts)


def tool(
    function: ToolFunction | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    provenance: Provenance = Provenance.NATIVE,
    read_only: bool = False,
) -> Any:
    """Turn a typed function into a `Tool`; the schema comes from its type hints.

    Usable bare (`@tool`) or with options (`@tool(name="x", read_only=True)`). The first
    docstring paragraph becomes the description unless `description` is given. An `async def`
    function runs on the event loop; a plain function runs in a worker thread, so it may block.
    `read_only=True` declares that the function never changes anything, so it may run under
    `autonomy: read_only`.

    Raises:
        ToolDefinitionError: the function cannot be a tool; the message names the function and
            lists every problem (missing hints, `*args`/`**kwargs`, unsupported types).
    """

    def decorate(fn: ToolFunction) -> FunctionTool:
        tool_name = name or fn.__name__
        model = _build_argument_model(fn, tool_name)
        schema = model.model_json_schema()
        schema.pop("title", None)
        for prop in schema.get("properties", {}).values():
            if isinstance(prop, dict):
                prop.pop("title", None)
        return FunctionTool(
            name=tool_name,
            description=description if description is not None else _summary(fn),
            function=fn,
            model=model,
            schema=schema,
            provenance=provenance,
            read_only=read_only,
        )

    return decorate if function is None else decorate(function)


def _summary(fn: ToolFunction) -> str:
    doc = inspect.getdoc(fn) or ""
    return doc.split("\n\n", 1)[0].replace("\n", " ").strip()


def _read_parameters(fn: ToolFunction) -> tuple[list[inspect.Parameter], dict[str, Any], list[str]]:
    problems: list[str] = []
    try:
        hints = get_type_hints(fn)
    except Exception as exc:  # an unresolvable forward reference
        hints = {}
        problems.append(f"type hints cannot be resolved ({exc})")
    params = list(inspect.signature(fn).parameters.values())
    for param in params:
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            problems.append(f"parameter {param.name!r}: *args/**kwargs are not supported")
        elif param.name not in hints:
            problems.append(f"parameter {param.name!r} has no type hint")
    return params, hints, problems


def _build_argument_model(fn: ToolFunction, tool_name: str) -> type[BaseModel]:
    params, hints, problems = _read_parameters(fn)
    fields: dict[str, Any] = {}
    for param in params:
        if param.name not in hints or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (hints[param.name], default)
    if not problems:
        try:
            model = create_model(
                f"{tool_name}_arguments",
                __config__=ConfigDict(extra="forbid"),
                **fields,
            )
            model.model_json_schema()
            return model
        except Exception as exc:
            problems.append(f"schema cannot be generated ({exc})")
    raise ToolDefinitionError(
        f"Error generating schema for tool {fn.__qualname__!r}: " + "; ".join(problems)
    )
