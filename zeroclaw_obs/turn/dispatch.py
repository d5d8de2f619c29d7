"""Execution: the parallel rule, sequential and parallel dispatch, cancellation, timeouts.

Parallel only when `parallel_tools` is on, the response has more than one call, at least two
calls survive preparation, none of them needed approval and none is `tool_search`; otherwise
sequential, in the model's order. Every call keeps exactly one slot in the model's order.

Cancellation is a scope (`TurnCancellation`): the turn's task is cancelled, and the
`CancelledError` surfaces at whatever this module awaits. Sequential dispatch then stops and
marks the running and remaining calls `interrupted`; parallel dispatch lets finished siblings
keep their real results and interrupts only the unfinished ones. Recording an interrupted slot
is synchronous, so it cannot itself be cancelled half-way. A tool that raises `CancelledError`
after the turn's cancellation was requested is interrupted by it too: `delegate` does so once
its nested turn has absorbed the cancel and recorded its own interrupted calls.

A call's deadline is a scope too (`deadline.CallDeadline`): one timer serves a sequential
batch, each task of a parallel batch has its own.

A scripted model that runs out of responses inside a tool (a sub-agent's script) is bad input,
as it is for the turn's own model: `ScenarioExhaustedError` is never a tool's failed result.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

from ..errors import ScenarioExhaustedError
from ..observability.events import LoopDetection, ToolOutcome, ToolProgress
from ..observability.observer import tool_scope
from ..tools.base import ToolResult
from ..tools.mcp_client import ProgressCallback, current_progress
from .context import ResolvedAgentExecution, TurnState
from .deadline import CallDeadline
from .events import TurnEvent
from .hooks import HookCall
from .loop_detection import LoopSeverity
from .prep import PreparedCall
from .results import (
    INTERRUPTED_TEXT,
    Slot,
    SlotRecorder,
    canonical_key,
    executed_text,
    format_seconds,
    raised_text,
)

__all__ = ["Dispatcher", "should_run_parallel"]


def should_run_parallel(
    parallel_tools: bool, total_calls: int, prepared: Sequence[PreparedCall]
) -> bool:
    """The exact parallel rule of LIFECYCLE §6."""
    if not parallel_tools or total_calls <= 1:
        return False
    runnable = [p for p in prepared if p.runnable]
    if len(runnable) < 2:
        return False
    if any(p.needs_approval for p in prepared):
        return False
    return not any(p.slot.name == "tool_search" for p in runnable)


class Dispatcher:
    """Runs the prepared calls of one response and closes every slot."""

    def __init__(
        self, execution: ResolvedAgentExecution, state: TurnState, recorder: SlotRecorder
    ) -> None:
        self._execution = execution
        self._state = state
        self._recorder = recorder
        self._timeout = execution.config.tool_timeout_s
        self.abort_message: str | None = None
        """Set when loop detection decided to abort; the loop ends the turn after recording."""

    async def dispatch(self, prepared: list[PreparedCall]) -> list[Slot]:
        """Run the calls; return the slots in the model's order.

        Sets `state.cancellation.requested` handling: when the turn is cancelled the
        unfinished slots become `interrupted` and this returns normally; the loop then ends the
        turn as cancelled.

        Raises:
            asyncio.CancelledError: a cancellation that this turn's scope did not request.
        """
        config = self._execution.config
        if should_run_parallel(config.parallel_tools, len(prepared), prepared):
            await self._parallel(prepared)
        else:
            await self._sequential(prepared)
        return [p.slot for p in prepared]

    async def _sequential(self, prepared: list[PreparedCall]) -> None:
        cancellation = self._state.cancellation
        deadline = CallDeadline(self._timeout)  # one timer for the whole batch
        try:
            for position, item in enumerate(prepared):
                if cancellation.requested:
                    self._interrupt_rest(prepared[position:])
                    return
                if not item.runnable:
                    self._recorder.record_unrun(item.slot)
                    continue
                try:
                    await self._run(item, deadline)
                except asyncio.CancelledError as exc:
                    if not cancellation.owns(exc):
                        raise
                    cancellation.absorb()
                    self._interrupt_rest(prepared[position:])
                    return
        finally:
            deadline.close()

    async def _parallel(self, prepared: list[PreparedCall]) -> None:
        for item in prepared:
            if not item.runnable:
                self._recorder.record_unrun(item.slot)
        runnable = [p for p in prepared if p.runnable]
        cap = self._execution.config.max_parallel_tools
        limiter = asyncio.Semaphore(cap) if cap else None
        cancellation = self._state.cancellation
        try:
            async with asyncio.TaskGroup() as group:
                for item in runnable:
                    group.create_task(self._run_limited(item, limiter))
        except asyncio.CancelledError as exc:
            if not cancellation.owns(exc):
                raise
            cancellation.absorb()
            self._interrupt_rest(runnable)
        except ExceptionGroup as failed:
            # `_run` records every other exception in its slot: only bad input gets here.
            raise failed.exceptions[0] from None

    async def _run_limited(self, item: PreparedCall, limiter: asyncio.Semaphore | None) -> None:
        deadline = CallDeadline(self._timeout)  # each task of the batch has its own
        try:
            if limiter is None:
                await self._run(item, deadline)
                return
            async with limiter:
                await self._run(item, deadline)
        finally:
            deadline.close()

    def _interrupt_rest(self, items: Sequence[PreparedCall]) -> None:
        for item in items:
            slot = item.slot
            if slot.closed:
                continue  # finished siblings keep their real result
            if slot.start_ns == 0 and slot.decided:
                self._recorder.record_unrun(slot)  # decided in preparation: keep its outcome
                continue
            slot.fill(ToolOutcome.INTERRUPTED, INTERRUPTED_TEXT)
            slot.executed = False
            if slot.start_ns:
                self._recorder.close(slot)
            else:
                self._recorder.record_unrun(slot)

    async def _run(self, item: PreparedCall, deadline: CallDeadline) -> None:
        slot, tool = item.slot, item.tool
        assert tool is not None
        slot.executed = True  # before `open`: it takes the arguments as dispatched
        self._recorder.open(slot)
        try:
            # The tracing side's scope: spans the tool itself starts nest under its span.
            with tool_scope(self._execution.observer, self._state.turn_id, slot.call_id):
                # Only a real MCP tool (it declares `mcp.*` span attributes) reports progress:
                # other calls skip building the reporter on the hot path.
                progress = (
                    current_progress.set(self._progress_reporter(slot))
                    if slot.span_attributes
                    else None
                )
                try:
                    with deadline:
                        result = await tool.execute(slot.arguments)
                finally:
                    if progress is not None:
                        current_progress.reset(progress)
        except TimeoutError:
            slot.fill(
                ToolOutcome.ERROR,
                f"Error: tool timed out after {format_seconds(self._timeout)}s",
                error_type="timeout",
            )
        except asyncio.CancelledError as exc:
            task = asyncio.current_task()
            if task is None or task.cancelling() or self._state.cancellation.requested:
                raise  # a real cancellation of this turn: the caller records `interrupted`
            # The tool raised CancelledError on its own (e.g. a library's inner task was
            # cancelled); nobody cancelled us, so it is an execution error, not a turn cancel.
            slot.fill(ToolOutcome.ERROR, raised_text(slot.name, exc), error_type=type(exc).__name__)
        except ScenarioExhaustedError:
            raise
        except Exception as exc:
            slot.fill(ToolOutcome.ERROR, raised_text(slot.name, exc), error_type=type(exc).__name__)
        else:
            self._record_result(slot, result)
        if slot.outcome is ToolOutcome.SUCCESS:
            self._detect_loop(slot)
        self._recorder.close(slot)
        if self._execution.hooks.has_after:
            await self._after_hooks(slot)

    def _progress_reporter(self, slot: Slot) -> ProgressCallback:
        """What a running call's progress becomes: TurnEvent `tool_progress` and a span event.

        An MCP server's `notifications/progress` arrive through `mcp_client.current_progress`
        while the call runs; the message is server text, so it is redacted.
        """
        state, execution = self._state, self._execution
        redact = execution.redactor.redact_text

        def report(progress: float, total: float | None, message: str | None) -> None:
            shown = redact(message) if message else None
            state.events(
                TurnEvent(
                    type="tool_progress",
                    id=slot.call_id,
                    name=slot.shown_name,
                    data={"progress": progress, "total": total, "message": shown},
                )
            )
            assert state.correlation is not None
            execution.observer.on_event(
                ToolProgress(
                    correlation=state.correlation,
                    iteration=state.iteration,
                    tool_call_id=slot.call_id,
                    tool=slot.label or slot.shown_name,
                    progress=progress,
                    total=total,
                    message=shown,
                    time_ns=time.time_ns(),
                )
            )

        return report

    def _record_result(self, slot: Slot, result: object) -> None:
        if not isinstance(result, ToolResult):
            slot.fill(
                ToolOutcome.ERROR,
                raised_text(
                    slot.name, TypeError(f"returned {type(result).__name__}, not ToolResult")
                ),
                error_type="invalid_result",
            )
            return
        if not isinstance(result.output, str) or not (
            result.error is None or isinstance(result.error, str)
        ):
            result = ToolResult(
                bool(result.success),
                "" if result.output is None else str(result.output),
                None if result.error is None else str(result.error),
            )
        text, success = executed_text(result)
        slot.fill(
            ToolOutcome.SUCCESS if success else ToolOutcome.ERROR,
            text,
            success=success,
            error_type=None if success else "tool_error",
        )

    def _detect_loop(self, slot: Slot) -> None:
        detector = self._state.loop_detector
        if detector is None:
            return
        key = slot.key or canonical_key(slot.name, slot.arguments)
        signal = detector.record(slot.name, key, slot.text)
        if signal is None:
            return
        assert self._state.correlation is not None
        self._execution.observer.on_event(
            LoopDetection(
                correlation=self._state.correlation,
                iteration=self._state.iteration,
                tool_call_id=slot.call_id,
                tool=self._execution.shown.tool(slot.name),
                kind=signal.kind.value,
                severity=signal.severity.value,
                # The detail quotes tool names, which are the operator's payloads too.
                message=self._execution.redactor.redact_text(signal.detail),
                time_ns=time.time_ns(),
            )
        )
        if signal.severity is LoopSeverity.ABORT:
            self.abort_message = self.abort_message or signal.abort_message
        else:
            slot.notes.append(signal.note)

    async def _after_hooks(self, slot: Slot) -> None:
        call = HookCall(
            name=slot.name,
            arguments=dict(slot.arguments),
            call_id=slot.call_id,
            turn_id=self._state.turn_id,
        )
        result = ToolResult(
            slot.success, slot.text if slot.success else "", None if slot.success else slot.text
        )
        await self._execution.hooks.run_after(call, result)
