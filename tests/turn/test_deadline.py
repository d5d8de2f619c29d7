"""Tests for `zeroclaw_obs.turn.deadline`: one reusable per-call deadline scope."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from zeroclaw_obs.turn.deadline import CallDeadline


class TestCallDeadline:
    async def test_a_call_that_outlives_its_deadline_times_out(self):
        """A call still running after `seconds` is cancelled and the scope raises TimeoutError."""
        deadline = CallDeadline(0.02)
        try:
            with pytest.raises(TimeoutError), deadline:
                await asyncio.sleep(5)
        finally:
            deadline.close()

    async def test_each_call_gets_the_whole_budget(self):
        """Successive calls that each end in time never time out, whatever their sum."""
        deadline = CallDeadline(0.05)
        try:
            for _ in range(4):
                with deadline:
                    await asyncio.sleep(0.03)  # 0.12 s in all, 0.03 s a call
        finally:
            deadline.close()

    async def test_a_call_after_a_timeout_runs_to_its_end(self):
        """After one call timed out, the next call under the same scope has a fresh budget."""
        deadline = CallDeadline(0.03)
        try:
            with pytest.raises(TimeoutError), deadline:
                await asyncio.sleep(5)
            with deadline:
                await asyncio.sleep(0.01)
            with pytest.raises(TimeoutError), deadline:
                await asyncio.sleep(5)
        finally:
            deadline.close()

    async def test_a_late_call_is_timed_from_its_own_start(self):
        """A call that starts late in an earlier call's budget is cut at its own deadline."""
        loop = asyncio.get_running_loop()
        deadline = CallDeadline(0.06)
        try:
            with deadline:
                await asyncio.sleep(0.04)
            started = loop.time()
            with pytest.raises(TimeoutError), deadline:
                await asyncio.sleep(5)
            assert 0.06 <= loop.time() - started < 1
        finally:
            deadline.close()

    async def test_an_outside_cancel_stays_a_cancel(self):
        """A task cancelled by someone else while its call runs gets CancelledError."""
        deadline = CallDeadline(5)

        async def call() -> None:
            try:
                with deadline:
                    await asyncio.sleep(5)
            finally:
                deadline.close()

        task = asyncio.create_task(call())
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    async def test_a_cancel_during_expiry_is_not_swallowed(self):
        """A cancel that arrives after the deadline fired still ends the task as cancelled."""
        deadline = CallDeadline(0.01)

        async def call() -> None:
            try:
                with deadline:
                    try:
                        await asyncio.sleep(5)
                    finally:
                        asyncio.current_task().cancel()  # the turn's cancel, meanwhile
            finally:
                deadline.close()

        with pytest.raises(asyncio.CancelledError):
            await asyncio.create_task(call())

    async def test_a_call_that_absorbs_the_cancel_returns_normally(self):
        """A call that catches the deadline's cancel and returns ends without an error."""
        deadline = CallDeadline(0.01)
        try:
            with deadline, contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(5)
            assert 0 == asyncio.current_task().cancelling()
        finally:
            deadline.close()

    async def test_a_closed_scope_can_serve_again(self):
        """After `close` the next call arms a new timer and is still cut at its deadline."""
        deadline = CallDeadline(0.02)
        with deadline:
            await asyncio.sleep(0)
        deadline.close()
        try:
            with pytest.raises(TimeoutError), deadline:
                await asyncio.sleep(5)
        finally:
            deadline.close()
