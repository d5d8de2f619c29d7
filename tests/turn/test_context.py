"""Resolved context: the turn's cancel scope."""

from __future__ import annotations

import asyncio

import pytest

from zeroclaw_obs.redaction import Redactor
from zeroclaw_obs.turn.context import IterationBudget, ShownNames, TurnCancellation, TurnState

from ..conftest import CountingRedactor

GITHUB = "ghp_Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lm9Nb8"


class TestTurnCancellation:
    async def test_cancel_cancels_the_bound_task(self):
        """`cancel()` cancels the task the scope is bound to, and `owns` recognises it."""
        scope = TurnCancellation()
        caught: list[bool] = []

        async def turn() -> None:
            with scope.scope():
                try:
                    await asyncio.sleep(10)
                except asyncio.CancelledError as exc:
                    caught.append(scope.owns(exc))
                    scope.absorb()

        task = asyncio.create_task(turn())
        await asyncio.sleep(0)
        scope.cancel()
        await task
        assert [True] == caught
        assert scope.requested

    async def test_foreign_cancellation_is_not_owned(self):
        """A CancelledError the scope did not request is not the scope's."""
        assert not TurnCancellation().owns(asyncio.CancelledError())

    async def test_cancel_before_bind_cancels_on_bind(self):
        """A cancel requested before the turn starts takes effect when it binds."""
        scope = TurnCancellation()
        scope.cancel()

        async def turn() -> None:
            with scope.scope():
                await asyncio.sleep(10)

        with pytest.raises(asyncio.CancelledError):
            await asyncio.create_task(turn())

    async def test_cancel_after_the_scope_is_a_no_op_for_the_task(self):
        """After the scope closes, `cancel()` no longer touches the task."""
        scope = TurnCancellation()
        with scope.scope():
            pass
        scope.cancel()
        await asyncio.sleep(0)
        assert 0 == asyncio.current_task().cancelling()


class TestTurnState:
    def test_each_turn_gets_its_own_id_and_history(self):
        """Two turns never share an id or a history list."""
        a, b = TurnState(user_message="x"), TurnState(user_message="x")
        assert a.turn_id != b.turn_id
        assert a.messages is not b.messages


class TestShownNames:
    def test_operator_names_are_redacted(self):
        """The alias, provider and model are shown redacted; clean names are unchanged."""
        shown = ShownNames(
            Redactor(), alias=f"bot {GITHUB}", provider="openai", model=f"m/{GITHUB}"
        )
        assert ("bot [REDACTED:github_token]", "openai", "m/[REDACTED:github_token]") == (
            shown.alias,
            shown.provider,
            shown.model,
        )

    def test_a_tool_name_is_redacted_once(self):
        """A registry name is redacted the first time it is shown, then looked up."""
        redactor = CountingRedactor()
        shown = ShownNames(redactor, alias="a", provider="p", model="m")
        before = redactor.calls
        names = [shown.tool(f"t.{GITHUB}") for _ in range(3)]
        assert ["t.[REDACTED:github_token]"] * 3 == names
        assert 1 == redactor.calls - before

    def test_response_models_are_bounded(self):
        """The memo of response model names never grows past its limit."""
        shown = ShownNames(Redactor(), alias="a", provider="p", model="m")
        for i in range(ShownNames.MODEL_MEMO_LIMIT * 3):
            shown.response_model(f"model-{i}")
        assert ShownNames.MODEL_MEMO_LIMIT >= len(shown._models)


class TestLinkedCancellation:
    async def test_cancelling_the_parent_cancels_the_nested_turn(self):
        """A nested (delegated) turn's scope is cancelled with its parent's, in its own task."""
        parent = TurnCancellation()
        caught: list[bool] = []

        async def nested_turn(scope: TurnCancellation) -> None:
            with scope.scope():
                try:
                    await asyncio.sleep(10)
                except asyncio.CancelledError as exc:
                    caught.append(scope.owns(exc))
                    scope.absorb()

        with parent.linked() as nested:
            task = asyncio.create_task(nested_turn(nested))
            await asyncio.sleep(0)
            parent.cancel()
            await task
        assert [True] == caught
        assert nested.requested

    async def test_cancelling_the_nested_turn_leaves_the_parent_alone(self):
        parent = TurnCancellation()
        with parent.linked() as nested:
            nested.cancel()
        assert not parent.requested

    async def test_a_link_made_after_the_cancel_is_cancelled(self):
        parent = TurnCancellation()
        parent.cancel()
        with parent.linked() as nested:
            assert nested.requested

    async def test_the_link_ends_with_the_block(self):
        """A finished sub-agent is not kept, so a later cancel does not reach it."""
        parent = TurnCancellation()
        with parent.linked() as nested:
            pass
        parent.cancel()
        assert not nested.requested

    async def test_in_the_same_task_absorb_takes_both_requests(self):
        """Sequential dispatch runs the nested turn in the parent's task: both scopes cancel
        it, and the nested turn's absorb leaves the task able to await again."""
        parent = TurnCancellation()
        with parent.scope(), parent.linked() as nested, nested.scope():
            parent.cancel()
            with pytest.raises(asyncio.CancelledError) as raised:
                await asyncio.sleep(10)
            assert nested.owns(raised.value)
            nested.absorb()
            await asyncio.sleep(0)


class TestIterationBudget:
    def test_reserve_takes_one_until_none_is_left(self):
        budget = IterationBudget(2)

        assert [True, True, False, False] == [budget.reserve() for _ in range(4)]
        assert (2, 0) == (budget.used, budget.remaining)

    def test_a_shared_budget_counts_every_turn(self):
        """A parent and the turn it delegates reserve from one budget."""
        budget = IterationBudget(3)
        parent = TurnState(user_message="go", budget=budget)
        nested = TurnState(user_message="task", budget=parent.budget)

        assert parent.budget is not None and nested.budget is not None
        parent.budget.reserve()
        nested.budget.reserve()
        nested.budget.reserve()
        assert not parent.budget.reserve()

    def test_a_budget_needs_an_iteration(self):
        with pytest.raises(ValueError, match="at least one iteration"):
            IterationBudget(0)
