"""Tool definition: `@tool` schemas, argument validation, `ToolResult`."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Iterator
from typing import Any, Literal

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from zeroclaw_obs.errors import ToolDefinitionError
from zeroclaw_obs.observability.health import TelemetryHealth
from zeroclaw_obs.observability.traces.tracing import SpanObserver
from zeroclaw_obs.tools.base import (
    ArgumentError,
    Provenance,
    Tool,
    ToolResult,
    ToolSpec,
    tool,
)


@tool
async def get_weather(city: str, units: Literal["c", "f"] = "c") -> str:
    """Current weather for a city.

    Longer text that is not part of the description.
    """
    return f"{city}: 18{units.upper()}"


@tool(name="count_words", provenance=Provenance.EXTENSION)
def count(text: str, minimum: int = 0) -> ToolResult:
    """Count words."""
    return ToolResult.ok(str(max(minimum, len(text.split()))))


class TestToolResult:
    def test_ok_and_fail(self):
        """`ToolResult.ok` succeeds with output; `ToolResult.fail` carries the error."""
        assert ToolResult(True, "x", None) == ToolResult.ok("x")
        assert ToolResult(False, "", "boom") == ToolResult.fail("boom")


class TestToolDecorator:
    def test_schema_from_type_hints(self):
        """The JSON schema comes from the hints: types, required, defaults and enums."""
        expected = {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "units": {"enum": ["c", "f"], "type": "string", "default": "c"},
            },
            "required": ["city"],
            "additionalProperties": False,
        }
        assert expected == get_weather.parameters_schema()

    def test_description_is_first_docstring_paragraph(self):
        """The description is the docstring's first paragraph."""
        assert "Current weather for a city." == get_weather.description

    def test_spec_is_what_the_model_sees(self):
        """`spec` carries name, description and parameters only."""
        spec = count.spec
        assert isinstance(spec, ToolSpec)
        assert ("count_words", "Count words.") == (spec.name, spec.description)
        assert Provenance.EXTENSION == count.provenance

    async def test_execute_async_and_sync_functions(self):
        """Async and sync functions both execute; a plain return value becomes `ok`."""
        assert ToolResult.ok("Oslo: 18C") == await get_weather.execute({"city": "Oslo"})
        assert ToolResult.ok("2") == await count.execute({"text": "a b"})

    def test_validation_coerces_and_fills_defaults(self):
        """Validation returns the arguments to dispatch, defaults included."""
        assert {"city": "Oslo", "units": "c"} == get_weather.validate_arguments({"city": "Oslo"})

    def test_validation_failure_is_a_value(self):
        """A schema violation is an `ArgumentError` naming the field, never an exception."""
        problem = get_weather.validate_arguments({"units": "k"})
        assert isinstance(problem, ArgumentError)
        assert "city" in problem.message
        assert "units" in problem.message

    def test_unexpected_argument_is_rejected(self):
        """Arguments the function does not take are rejected."""
        problem = get_weather.validate_arguments({"city": "Oslo", "country": "NO"})
        assert isinstance(problem, ArgumentError)
        assert "country" in problem.message

    def test_definition_errors_list_every_problem(self):
        """A bad definition fails at decoration with one error naming the function and problems."""

        def bad(a, *args: int, b: int, **kwargs: str) -> str:
            return ""

        with pytest.raises(ToolDefinitionError) as info:
            tool(bad)
        message = str(info.value)
        assert "bad" in message
        assert "'a' has no type hint" in message
        assert "'args'" in message
        assert "'kwargs'" in message

    async def test_direct_call_validates(self):
        """Calling a tool directly validates first and reads a failure as a failed result."""
        result = await get_weather()
        assert not result.success
        assert result.error.startswith("invalid arguments: city")


REQUEST = contextvars.ContextVar("REQUEST", default="none")


@pytest.fixture
def gate() -> Iterator[threading.Event]:
    """An event a blocking tool waits on; set at teardown so no worker is left parked."""
    event = threading.Event()
    yield event
    event.set()


def blocking_scenario(*calls: dict[str, Any], **config: Any) -> dict[str, Any]:
    return {
        "user": "go",
        "config": {"approval": {"auto_approve": ["*"]}, **config},
        "responses": [{"tool_calls": list(calls)}, {"text": "done"}],
    }


def tool_texts(replay) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in replay.state.messages if m["role"] == "tool"}


class TestReadOnly:
    def test_tools_are_not_read_only_by_default(self):
        """A tool that declares nothing is not read-only: the safe default."""
        assert (False, False) == (get_weather.read_only, Tool.read_only)

    def test_decorator_declares_read_only(self):
        """`@tool(read_only=True)` declares the function read-only."""

        @tool(read_only=True)
        def lookup(key: str) -> str:
            """Look a key up."""
            return key

        assert lookup.read_only


class TestSyncFunctionsRunInAWorkerThread:
    async def test_a_sync_function_runs_off_the_event_loop(self):
        """A plain function runs in a worker thread; an `async def` one on the loop's thread."""
        seen: list[str] = []

        @tool
        def where_sync(n: int) -> str:
            seen.append(threading.current_thread().name)
            return "ok"

        @tool
        async def where_async(n: int) -> str:
            seen.append(threading.current_thread().name)
            return "ok"

        await where_sync.execute({"n": 1})
        await where_async.execute({"n": 1})
        assert ["zeroclaw-tool-worker", threading.current_thread().name] == seen
        assert (False, True) == (where_sync.runs_on_loop, where_async.runs_on_loop)

    async def test_the_call_sees_the_callers_context(self):
        """The worker runs in a copy of the caller's context: context variables and the current
        span are what they are in the task that awaits the call."""
        provider = TracerProvider()
        seen: list[Any] = []

        @tool
        def probe(n: int) -> str:
            seen.extend([REQUEST.get(), trace.get_current_span()])
            return "ok"

        REQUEST.set("req-7")
        with provider.get_tracer("test").start_as_current_span("outer") as outer:
            await probe.execute({"n": 1})
        assert ["req-7", outer] == seen
        provider.shutdown()

    async def test_in_a_turn_the_tool_span_is_current_in_the_thread(self, run_scenario):
        """In a traced turn, the span current inside a sync tool's thread is its own
        `execute_tool` span, so spans its code starts nest under it."""
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        observer = SpanObserver(provider, health=TelemetryHealth())
        seen: list[int] = []

        @tool
        def probe(n: int) -> str:
            seen.append(trace.get_current_span().get_span_context().span_id)
            with provider.get_tracer("user.code").start_as_current_span("inner"):
                pass
            return "ok"

        data = blocking_scenario({"id": "c1", "name": "probe", "arguments": {"n": 1}})
        await run_scenario(data, observer=observer, extra_tools=[probe])
        assert observer.force_flush(5.0)
        spans = {s.name: s for s in exporter.get_finished_spans()}
        tool_span = spans["execute_tool probe"]
        assert [tool_span.context.span_id] == seen
        assert tool_span.context.span_id == spans["inner"].parent.span_id
        observer.shutdown(1.0)
        provider.shutdown()

    async def test_exceptions_reach_the_caller(self):
        """What a sync function raises is raised by `execute`, as for an async function."""

        @tool
        def broken(n: int) -> str:
            raise ValueError("no such row")

        with pytest.raises(ValueError, match="no such row"):
            await broken.execute({"n": 1})

    async def test_an_awaitable_return_value_is_awaited(self):
        """A plain function that returns an awaitable has it awaited on the loop."""

        async def later() -> str:
            return "later"

        @tool
        def deferred(n: int) -> Any:
            return later()

        assert ToolResult.ok("later") == await deferred.execute({"n": 1})

    async def test_a_blocking_tool_does_not_stall_its_parallel_sibling(self, run_scenario, gate):
        """In a parallel batch an async sibling finishes while a sync tool is still blocked,
        and both keep their real results."""
        order: list[str] = []

        @tool
        def blocker(n: int) -> str:
            gate.wait(timeout=5)
            order.append("blocker")
            return "released"

        @tool
        async def sibling(n: int) -> str:
            await asyncio.sleep(0.01)
            order.append("sibling")
            gate.set()
            return "sibling ran"

        data = blocking_scenario(
            {"id": "c1", "name": "blocker", "arguments": {"n": 1}},
            {"id": "c2", "name": "sibling", "arguments": {"n": 2}},
            parallel_tools=True,
        )
        _, replay = await run_scenario(data, extra_tools=[blocker, sibling])
        assert ["sibling", "blocker"] == order
        assert {"c1": "released", "c2": "sibling ran"} == tool_texts(replay)

    async def test_the_timeout_fires_on_a_blocked_sync_tool(self, run_scenario, gate):
        """`tool_timeout_s` ends a sync tool that never returns: `Error: tool timed out after
        {n}s`, while its thread stays parked until the test releases it."""

        @tool
        def stuck(n: int) -> str:
            gate.wait(timeout=5)
            return "too late"

        data = blocking_scenario(
            {"id": "c1", "name": "stuck", "arguments": {"n": 1}}, tool_timeout_s=0.05
        )
        _, replay = await run_scenario(data, extra_tools=[stuck])
        assert {"c1": "Error: tool timed out after 0.05s"} == tool_texts(replay)
        assert not gate.is_set()


class SchemaTool(Tool):
    name = "schema_tool"

    def __init__(self, schema: dict) -> None:
        self._schema = schema

    def parameters_schema(self) -> dict:
        return self._schema

    async def execute(self, args: dict) -> ToolResult:
        return ToolResult.ok("ran")


SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "minLength": 1},
        "days": {"type": "integer", "minimum": 1, "maximum": 7},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
        "mode": {"enum": ["fast", "slow"]},
        "extra": {"type": ["string", "null"]},
    },
    "required": ["city"],
    "additionalProperties": False,
}


class TestJsonSchemaValidation:
    @pytest.mark.parametrize(
        ("args", "fragment"),
        [
            ({}, "city: required property is missing"),
            ({"city": 3}, "city: expected string, got integer"),
            ({"city": ""}, "city: must have at least 1 characters"),
            ({"city": "a", "days": True}, "days: expected integer, got boolean"),
            ({"city": "a", "days": 9}, "days: must be <= 7"),
            ({"city": "a", "tags": ["x", 1]}, "tags[1]: expected string"),
            ({"city": "a", "tags": ["x", "y", "z"]}, "tags: must have at most 2 items"),
            ({"city": "a", "mode": "warp"}, "mode: must be one of"),
            ({"city": "a", "other": 1}, "other: unexpected property"),
        ],
    )
    def test_violations_name_the_field(self, args, fragment):
        """Each violation is reported with its path and what is wrong."""
        problem = SchemaTool(SCHEMA).validate_arguments(args)
        assert isinstance(problem, ArgumentError)
        assert fragment in problem.message

    def test_valid_arguments_pass_unchanged(self):
        """Valid arguments are returned as given."""
        args = {"city": "a", "days": 3, "tags": ["x"], "mode": "fast", "extra": None}
        assert args == SchemaTool(SCHEMA).validate_arguments(args)

    def test_top_level_must_be_an_object(self):
        """A non-object where the schema wants one fails at the top level."""
        problem = SchemaTool({"type": "object"}).validate_arguments([])  # type: ignore[arg-type]
        assert isinstance(problem, ArgumentError)
        assert problem.message.startswith("arguments: expected object")
