"""Benchmark harness: a provider that is never the bottleneck, tiny tools, timed turns.

Every turn runs through the real engine (`zeroclaw_obs.replay.build_replay` →
`run_tool_call_loop`) with the default `NoopObserver` (telemetry off). Only the provider is
swapped: `FastProvider` hands back pre-built `ProviderResponse`s by index, so the time a turn
takes is the engine's (plus the tool's own, which is measured separately and is ~0 here:
`tool_call_seconds`, `provider_call_seconds`). `measure` times several kinds of turn (`Case`)
interleaved round by round.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from report import Timing

from zeroclaw_obs.config import ApprovalConfig, ApprovalMode, RuntimeConfig
from zeroclaw_obs.providers.base import (
    NativeToolCall,
    Provider,
    ProviderRequest,
    ProviderResponse,
)
from zeroclaw_obs.replay import Replay, build_replay
from zeroclaw_obs.scenario import Scenario, ScenarioResponse
from zeroclaw_obs.tools.base import Tool, ToolResult, tool
from zeroclaw_obs.turn.events import TurnEvent
from zeroclaw_obs.turn.loop import TurnOutcome

__all__ = [
    "FINAL_TEXT",
    "Case",
    "FastProvider",
    "NoopTool",
    "SleepTool",
    "TurnShape",
    "WideOutputTool",
    "build_turn",
    "case",
    "discard_events",
    "make_function_tool",
    "measure",
    "median",
    "provider_call_seconds",
    "run_turn",
    "script",
    "timed_turn",
    "tool_call_seconds",
]

FINAL_TEXT = "done"
_SCHEMA = {
    "type": "object",
    "properties": {"i": {"type": "integer"}},
    "required": ["i"],
    "additionalProperties": False,
}


class NoopTool(Tool):
    """Returns a prebuilt `ToolResult.ok(...)` at once.

    Results differ from one call to the next (`ok 0` … `ok 63`), so the loop detector's
    `no_progress` pattern never fires while the detector still does its per-call work.
    """

    name = "noop"
    description = "Does nothing, immediately."

    def __init__(self) -> None:
        self._results = tuple(ToolResult.ok(f"ok {n}") for n in range(64))

    def parameters_schema(self) -> dict[str, Any]:
        return _SCHEMA

    async def execute(self, args: dict[str, Any]) -> ToolResult:
        return self._results[args["i"] & 63]


class SleepTool(Tool):
    """Sleeps `delay_s` with `asyncio.sleep`, then succeeds."""

    name = "sleepy"
    description = "Sleeps, then succeeds."

    def __init__(self, delay_s: float) -> None:
        self._delay = delay_s

    def parameters_schema(self) -> dict[str, Any]:
        return _SCHEMA

    async def execute(self, args: dict[str, Any]) -> ToolResult:
        await asyncio.sleep(self._delay)
        return ToolResult.ok(f"slept {args['i']}")


class WideOutputTool(Tool):
    """Returns a fresh `size`-character output per call (so retaining it would show)."""

    name = "wide"
    description = "Returns a large output."

    def __init__(self, size: int) -> None:
        self._body = "x" * (size - 8)

    def parameters_schema(self) -> dict[str, Any]:
        return _SCHEMA

    async def execute(self, args: dict[str, Any]) -> ToolResult:
        return ToolResult.ok(f"{args['i']:08d}" + self._body)


class FastProvider(Provider):
    """Returns pre-built responses in order; one list index per `complete`.

    `on_request`, when set, is called with the request before returning (the memory benchmark
    samples tracemalloc there). With `yields`, each call awaits `asyncio.sleep(0)` like a
    provider doing I/O would, which lets the event loop run between iterations. The provider
    keeps no reference to the requests.
    """

    name = "bench"
    model = "bench-model"
    native_tools = True

    def __init__(
        self,
        responses: Sequence[ProviderResponse],
        on_request: Callable[[ProviderRequest], None] | None = None,
        *,
        yields: bool = False,
    ) -> None:
        self._responses = responses
        self._next = 0
        self._on_request = on_request
        self._yields = yields

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        response = self._responses[self._next]
        self._next += 1
        if self._on_request is not None:
            self._on_request(request)
        if self._yields:
            await asyncio.sleep(0)
        return response


@dataclass(frozen=True)
class TurnShape:
    """`iterations` tool rounds of `calls` calls each, then a final text."""

    iterations: int
    calls: int

    @property
    def total_calls(self) -> int:
        return self.iterations * self.calls


def script(shape: TurnShape, tool_name: str) -> list[ProviderResponse]:
    """The provider script of one turn: distinct ids and distinct `{"i": k}` arguments."""
    responses = []
    k = 0
    for _ in range(shape.iterations):
        calls = []
        for _ in range(shape.calls):
            calls.append(NativeToolCall(id=f"call_{k}", name=tool_name, arguments={"i": k}))
            k += 1
        responses.append(ProviderResponse(tool_calls=calls))
    responses.append(ProviderResponse(text=FINAL_TEXT))
    return responses


class _NoTerminal:
    """An interactive prompt that is never available (benchmarks never read stdin)."""

    def is_available(self) -> bool:
        return False

    async def ask(self, request: Any) -> None:  # pragma: no cover - never asked
        raise AssertionError("no terminal in benchmarks")


def discard_events(event: TurnEvent) -> None:
    """A streaming `EventSink` that keeps nothing (a client consuming events as they come)."""


def build_turn(
    shape: TurnShape,
    tool: Tool,
    *,
    parallel: bool = False,
    max_tool_result_chars: int = 50_000,
    keep_events: bool = True,
    on_request: Callable[[ProviderRequest], None] | None = None,
    provider_yields: bool = False,
) -> Replay:
    """A ready-to-run turn: defaults everywhere except what the benchmark needs.

    The tool is auto-approved, `max_tool_iterations` fits the shape, telemetry is the default
    `NoopObserver`, receipts are off (the default), `redact_history` is on (the default).
    `keep_events=False` swaps the in-memory `TurnEventLog` for a sink that keeps nothing;
    `provider_yields=True` makes the provider give the event loop a turn at every request.
    """
    config = RuntimeConfig(
        parallel_tools=parallel,
        max_tool_iterations=shape.iterations + 1,
        max_tool_result_chars=max_tool_result_chars,
        approval=ApprovalConfig(mode=ApprovalMode.NON_INTERACTIVE, auto_approve=[tool.name]),
    )
    scenario = Scenario(
        user="benchmark",
        config=config,
        responses=[ScenarioResponse(text=FINAL_TEXT)],  # replaced by FastProvider below
    )
    replay = build_replay(scenario, source="benchmark", extra_tools=[tool], terminal=_NoTerminal())
    replay.execution.provider = FastProvider(
        script(shape, tool.name), on_request, yields=provider_yields
    )
    if not keep_events:
        replay.state.events = discard_events
    return replay


async def run_turn(replay: Replay) -> TurnOutcome:
    """Run a turn and check it ended with the final text (a benchmark of a broken turn lies)."""
    outcome = await replay.run()
    if outcome.text != FINAL_TEXT:
        raise RuntimeError(f"benchmark turn did not finish cleanly: {outcome.kind} {outcome.text}")
    return outcome


async def timed_turn(replay: Replay, *, gc_off: bool = True) -> float:
    """Seconds one turn takes, with the garbage collector off by default.

    `gc.collect()` first (so every repeat starts from the same heap), then one small untimed
    turn, because a full collection leaves the CPU caches cold and the first ~100 µs after it
    would otherwise be charged to the turn under test.
    """
    gc.collect()
    await run_turn(build_turn(TurnShape(1, 2), NoopTool()))
    if gc_off:
        gc.disable()
    try:
        start = time.perf_counter()
        await run_turn(replay)
        return time.perf_counter() - start
    finally:
        gc.enable()


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


_FN_RESULTS = tuple(ToolResult.ok(f"ok {n}") for n in range(64))


def make_function_tool() -> Tool:
    """The same no-op as a `@tool` function (arguments validated by pydantic)."""

    @tool(name="noop")
    async def noop(i: int) -> ToolResult:
        """Does nothing, immediately."""
        return _FN_RESULTS[i & 63]

    return noop


@dataclass(frozen=True)
class Case:
    """One kind of turn to time: how to build a fresh one, and whether gc stays off."""

    build: Callable[[], Replay]
    gc_off: bool = True


def case(
    shape: TurnShape, make_tool: Callable[[], Tool], *, gc_off: bool = True, **kw: Any
) -> Case:
    return Case(lambda: build_turn(shape, make_tool(), **kw), gc_off)


async def measure(cases: dict[str, Case], rounds: int) -> dict[str, Timing]:
    """Seconds per turn of each case, interleaved round by round.

    Each round runs every case once, so a burst of load from elsewhere on the machine lands
    on all cases alike instead of skewing one of them (their differences are what we report).
    One untimed warm-up turn per case comes first.
    """
    for item in cases.values():
        await run_turn(item.build())
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(rounds):
        for name, item in cases.items():
            times[name].append(await timed_turn(item.build(), gc_off=item.gc_off))
    return {name: Timing.of(values) for name, values in times.items()}


async def provider_call_seconds(n: int = 20_000) -> float:
    """The benchmark provider's own `complete` cost (it must not be the bottleneck)."""
    responses = script(TurnShape(n, 1), "noop")
    provider = FastProvider(responses)
    request = ProviderRequest(messages=[], tools=[], iteration=1)
    gc.disable()
    try:
        start = time.perf_counter()
        for _ in range(n):
            await provider.complete(request)
        return (time.perf_counter() - start) / n
    finally:
        gc.enable()


async def tool_call_seconds(item: Tool, n: int = 20_000) -> float:
    """The tool's own `execute` cost, awaited directly."""
    args = [{"i": k} for k in range(n)]
    gc.disable()
    try:
        start = time.perf_counter()
        for a in args:
            await item.execute(a)
        return (time.perf_counter() - start) / n
    finally:
        gc.enable()
