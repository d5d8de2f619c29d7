"""Tests for `zeroclaw_obs.turn.model_switch`: a turn goes on with another model (issue 18
item 3), on the scripted model."""

from __future__ import annotations

import asyncio
import dataclasses
import io
import json
from typing import Any

import pytest

from zeroclaw_obs.observability.events import (
    AgentEnd,
    AgentStart,
    LlmRequest,
    LlmResponse,
    ModelSwitched,
    ModelSwitchSource,
    TurnOutcomeKind,
)
from zeroclaw_obs.observability.logs.logs import LogObserver, build_logger
from zeroclaw_obs.observability.observer import MultiObserver
from zeroclaw_obs.providers.base import Provider
from zeroclaw_obs.providers.scripted import ScriptedProvider
from zeroclaw_obs.redaction import Redactor
from zeroclaw_obs.scenario import parse_scenario
from zeroclaw_obs.tools.base import tool
from zeroclaw_obs.turn.hooks import HookLlmCall, Hooks, SwitchModel
from zeroclaw_obs.turn.model_switch import (
    ModelSwitch,
    ModelSwitchRefused,
    TurnModelSwitch,
    current_model_switch,
    request_model_switch,
)

from ..builders import SECRET, Traced, chained
from ..conftest import RecordingObserver, make_replay


@tool
async def use_model(model: str) -> str:
    """Continue the turn on another model."""
    return "switching" if request_model_switch(model) else "already there"


@tool
def use_model_sync(model: str) -> str:
    """The same, from a worker thread (a plain function tool)."""
    request_model_switch(model)
    return "switching"


@tool
async def use_provider(provider: str, model: str) -> str:
    """Continue the turn on a model of another provider."""
    request_model_switch(model, provider=provider)
    return "switching"


def call(name: str, cid: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"id": cid, "name": name, "arguments": arguments}]}


def scenario(*responses: dict[str, Any], **config: Any) -> dict[str, Any]:
    return {
        "user": "think harder",
        "provider": {"model": "small", "models": ["big", "huge"]},
        "config": {"approval": {"auto_approve": ["*"]}, **config},
        "responses": list(responses),
    }


async def run(data: dict[str, Any], **kwargs: Any):
    observer = kwargs.pop("observer", None) or RecordingObserver()
    kwargs.setdefault("extra_tools", [use_model, use_model_sync, use_provider])
    replay = make_replay(data, observer=observer, **kwargs)
    outcome = await replay.run()
    return outcome, replay, observer


def requested_models(observer: RecordingObserver) -> list[tuple[int, str]]:
    return [(e.iteration, e.model) for e in observer.of(LlmRequest)]


def tool_texts(replay) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in replay.state.messages if m["role"] == "tool"}


class TestTurnModelSwitch:
    def make(self, callback=None) -> tuple[TurnModelSwitch, Provider]:
        replay = make_replay(scenario({"text": "x"}))
        execution = replay.execution
        if callback is not None:
            execution = dataclasses.replace(execution, switch_model=callback)
        switch = TurnModelSwitch()
        switch.bind(execution)
        return switch, execution.provider

    def test_a_known_model_waits_for_the_next_iteration(self):
        """A request the callback resolves waits on the turn, with who asked."""
        switch, _ = self.make()
        assert switch.request(ModelSwitch(model="big"), source=ModelSwitchSource.TOOL)
        pending = switch.take()
        assert ("big", "big", ModelSwitchSource.TOOL) == (
            pending.request.model,
            pending.provider.model,
            pending.source,
        )
        assert None is switch.take()

    def test_the_last_request_wins(self):
        """Two requests before the next iteration: the later one is the switch."""
        switch, _ = self.make()
        switch.request(ModelSwitch(model="big"), source=ModelSwitchSource.TOOL)
        switch.request(ModelSwitch(model="huge"), source=ModelSwitchSource.TOOL)
        assert "huge" == switch.take().provider.model

    def test_the_model_in_use_withdraws_a_waiting_request(self):
        """Asking for the model in use is no switch, and cancels one that waited."""
        switch, current = self.make()
        switch.request(ModelSwitch(model="big"), source=ModelSwitchSource.TOOL)
        stays = switch.request(
            ModelSwitch(model="small", provider=current.name), source=ModelSwitchSource.TOOL
        )
        assert (False, None) == (stays, switch.take())

    @pytest.mark.parametrize(
        ("request_", "reason"),
        [
            (ModelSwitch(model="gpt-9"), "unknown model"),
            (ModelSwitch(model="big", provider="anthropic"), "unknown provider"),
            (ModelSwitch(model="  "), "model must be a non-empty string"),
        ],
    )
    def test_unknown_targets_are_refused(self, request_: ModelSwitch, reason: str):
        """An unknown provider or model is refused with fixed words, and nothing waits."""
        switch, _ = self.make()
        with pytest.raises(ModelSwitchRefused) as refused:
            switch.request(request_, source=ModelSwitchSource.TOOL)
        assert (f"model switch refused: {reason}", None) == (str(refused.value), switch.take())

    def test_no_callback_refuses_every_switch(self):
        """An agent without a `switch_model` callback serves no other model."""
        replay = make_replay(scenario({"text": "x"}))
        switch = TurnModelSwitch()
        switch.bind(dataclasses.replace(replay.execution, switch_model=None))
        with pytest.raises(ModelSwitchRefused, match="not configured for this agent"):
            switch.request(ModelSwitch(model="big"), source=ModelSwitchSource.TOOL)

    def test_outside_a_turn(self):
        """`request_model_switch` outside a running turn is a programming error."""
        assert None is current_model_switch()
        with pytest.raises(RuntimeError, match="no turn is running"):
            request_model_switch("big")


class TestToolSwitch:
    async def test_the_next_iteration_asks_the_new_model(self):
        """A tool's switch takes effect at the top of the next iteration: the history so far,
        the iteration count going on, one turn start and end."""
        outcome, replay, observer = await run(
            scenario(call("use_model", "c1", model="big"), {"text": "done"})
        )
        assert (TurnOutcomeKind.FINAL, "done", 2) == (
            outcome.kind,
            outcome.text,
            outcome.iterations,
        )
        assert [(1, "small"), (2, "big")] == requested_models(observer)
        assert [(1, "small"), (2, "big")] == [
            (e.iteration, e.model) for e in observer.of(LlmResponse)
        ]
        (switched,) = observer.of(ModelSwitched)
        assert (2, "small", "big", "scripted", "scripted", ModelSwitchSource.TOOL) == (
            switched.iteration,
            switched.from_model,
            switched.to_model,
            switched.from_provider,
            switched.to_provider,
            switched.source,
        )
        assert (1, 1) == (len(observer.of(AgentStart)), len(observer.of(AgentEnd)))
        # The new model was sent everything the first one saw and did.
        assert [1, 3] == [e.message_count for e in observer.of(LlmRequest)]
        assert {"c1": "switching"} == tool_texts(replay)

    async def test_the_switch_event_comes_between_the_two_calls(self):
        """Observers see the switch after the first model's call and before the new one's."""
        _, _, observer = await run(scenario(call("use_model", "c1", model="big"), {"text": "ok"}))
        kinds = [type(e).__name__ for e in observer.events]
        switch = kinds.index("ModelSwitched")
        assert kinds.index("LlmResponse") < switch < len(kinds) - kinds[::-1].index("LlmRequest")

    async def test_a_sync_tool_switches_from_its_worker_thread(self):
        """A plain-function tool runs in a worker thread and still reaches its turn."""
        _, _, observer = await run(
            scenario(call("use_model_sync", "c1", model="huge"), {"text": "ok"})
        )
        assert [(1, "small"), (2, "huge")] == requested_models(observer)

    async def test_the_iteration_budget_goes_on_across_the_switch(self):
        """The cap counts every iteration, before and after the switch: never reset."""
        outcome, _, observer = await run(
            scenario(
                call("use_model", "c1", model="big"),
                call("use_model", "c2", model="huge"),
                call("use_model", "c3", model="big"),
                max_tool_iterations=3,
                max_iteration_behavior="error_at_cap",
            )
        )
        assert (TurnOutcomeKind.MAX_ITERATIONS, 3) == (outcome.kind, outcome.iterations)
        assert [(1, "small"), (2, "big"), (3, "huge")] == requested_models(observer)

    async def test_a_switch_waiting_at_the_cap_asks_the_summary_on_the_new_model(self):
        """At the cap, the graceful summary goes to the model a tool switched to."""
        outcome, _, observer = await run(
            scenario(
                call("use_model", "c1", model="big"),
                {"text": "summary"},
                max_tool_iterations=1,
            )
        )
        assert TurnOutcomeKind.MAX_ITERATIONS == outcome.kind
        assert outcome.text.startswith("summary")
        assert [(1, "small"), (2, "big")] == requested_models(observer)

    async def test_an_unknown_model_is_refused_back_to_the_tool(self):
        """The tool's slot reads the refusal; the turn goes on, on the model in use."""
        outcome, replay, observer = await run(
            scenario(call("use_model", "c1", model="gpt-9"), {"text": "stayed"})
        )
        assert (TurnOutcomeKind.FINAL, "stayed") == (outcome.kind, outcome.text)
        assert {
            "c1": "Error executing use_model: model switch refused: unknown model"
        } == tool_texts(replay)
        assert [(1, "small"), (2, "small")] == requested_models(observer)
        assert [] == observer.of(ModelSwitched)

    async def test_another_provider_is_refused(self):
        """A provider the agent file does not name is refused by name, never echoed."""
        _, replay, observer = await run(
            scenario(call("use_provider", "c1", provider="anthropic", model="big"), {"text": "x"})
        )
        assert {
            "c1": "Error executing use_provider: model switch refused: unknown provider"
        } == tool_texts(replay)
        assert [] == observer.of(ModelSwitched)

    async def test_a_scripted_tool_rule_switches(self):
        """`switch_model` on a scripted rule asks for the switch as a Python tool does (how a
        recording keeps one); its outcome is the slot, and another rule does not switch."""
        data = scenario(
            call("escalate", "c1", level="low"),
            call("escalate", "c2", level="high"),
            {"text": "done"},
        )
        data["tools"] = [
            {
                "name": "escalate",
                "responses": [
                    {"when": {"level": "high"}, "output": "switching", "switch_model": "big"},
                    {"default": {"output": "stay"}},
                ],
            }
        ]
        outcome, replay, observer = await run(data)

        assert "done" == outcome.text
        assert [(1, "small"), (2, "small"), (3, "big")] == requested_models(observer)
        assert {"c1": "stay", "c2": "switching"} == tool_texts(replay)
        (switched,) = observer.of(ModelSwitched)
        assert (3, ModelSwitchSource.TOOL) == (switched.iteration, switched.source)

    async def test_a_scripted_switch_to_an_unknown_model_is_refused(self):
        data = scenario(call("escalate", "c1"), {"text": "stayed"})
        data["tools"] = [
            {"name": "escalate", "responses": [{"default": {"output": "x", "switch_model": "z"}}]}
        ]
        _, replay, observer = await run(data)

        assert {
            "c1": "Error executing escalate: model switch refused: unknown model"
        } == tool_texts(replay)
        assert [] == observer.of(ModelSwitched)

    async def test_the_model_in_use_is_no_switch(self):
        """Asking for the model already in use changes nothing and reports nothing."""
        _, replay, observer = await run(
            scenario(call("use_model", "c1", model="small"), {"text": "x"})
        )
        assert {"c1": "already there"} == tool_texts(replay)
        assert [] == observer.of(ModelSwitched)

    async def test_a_switch_back_returns_to_the_first_model(self):
        """The file's own model is always a target: a turn can switch back to it."""
        _, _, observer = await run(
            scenario(
                call("use_model", "c1", model="big"),
                call("use_model", "c2", model="small"),
                {"text": "x"},
            )
        )
        assert [(1, "small"), (2, "big"), (3, "small")] == requested_models(observer)
        assert [("small", "big"), ("big", "small")] == [
            (e.from_model, e.to_model) for e in observer.of(ModelSwitched)
        ]

    async def test_the_shared_execution_is_left_as_it_was(self):
        """The switch belongs to the turn: the agent's execution keeps its provider."""
        _, replay, _ = await run(scenario(call("use_model", "c1", model="big"), {"text": "x"}))
        assert "small" == replay.execution.provider.model

    async def test_a_cancel_before_the_switch_wins(self):
        """A turn cancelled while its switch waits ends cancelled, with no switch."""
        holder: dict[str, Any] = {}

        @tool(name="use_model")
        async def cancelling(model: str) -> str:
            """Switch, then cancel the turn."""
            request_model_switch(model)
            holder["state"].cancellation.cancel()
            return "switching"

        observer = RecordingObserver()
        replay = make_replay(
            scenario(call("use_model", "c1", model="big"), {"text": "never"}),
            observer=observer,
            extra_tools=[cancelling],
        )
        holder["state"] = replay.state
        outcome = await replay.run()
        assert TurnOutcomeKind.CANCELLED == outcome.kind
        assert ([], [(1, "small")]) == (observer.of(ModelSwitched), requested_models(observer))


class TestHookSwitch:
    def hooks(self, *decisions: Any) -> tuple[Hooks, list[HookLlmCall]]:
        """A hook that answers `decisions` in order (then Continue), keeping what it saw."""
        seen: list[HookLlmCall] = []
        answers = list(decisions)

        def hook(call: HookLlmCall) -> Any:
            seen.append(call)
            return answers.pop(0) if answers else None

        hooks = Hooks()
        hooks.add_before_llm(hook)
        return hooks, seen

    async def test_the_request_it_saw_goes_to_the_new_model(self):
        """Nothing is sent to the first model: the same iteration is asked of the new one,
        and the hook sees that request too."""
        hooks, seen = self.hooks(SwitchModel(model="big"))
        outcome, _, observer = await run(scenario({"text": "from big"}), hooks=hooks)
        assert (TurnOutcomeKind.FINAL, "from big", 1) == (
            outcome.kind,
            outcome.text,
            outcome.iterations,
        )
        assert [(1, "big")] == requested_models(observer)
        assert [("small", "scripted", 1), ("big", "scripted", 1)] == [
            (c.model, c.provider, c.iteration) for c in seen
        ]
        (switched,) = observer.of(ModelSwitched)
        assert (1, ModelSwitchSource.HOOK) == (switched.iteration, switched.source)

    async def test_a_second_switch_of_one_request_is_ignored(self):
        """A hook that keeps switching cannot bounce one request between models forever."""
        hooks, _ = self.hooks(SwitchModel(model="big"), SwitchModel(model="huge"))
        _, _, observer = await run(scenario({"text": "ok"}), hooks=hooks)
        assert [(1, "big")] == requested_models(observer)
        assert 1 == len(observer.of(ModelSwitched))

    async def test_the_model_in_use_counts_as_continue(self):
        """A hook naming the model in use lets the request go, and later hooks still run."""
        later: list[int] = []
        hooks = Hooks()
        hooks.add_before_llm(lambda c: SwitchModel(model="small"), priority=5)
        hooks.add_before_llm(lambda c: later.append(c.iteration))
        _, _, observer = await run(scenario({"text": "ok"}), hooks=hooks)
        assert ([1], [(1, "small")], []) == (
            later,
            requested_models(observer),
            observer.of(ModelSwitched),
        )

    async def test_a_switch_stops_the_chain(self):
        """Lower-priority hooks do not see the request a switch kept from being sent; they
        see the one sent to the new model."""
        later: list[str] = []
        hooks = Hooks()
        hooks.add_before_llm(
            lambda c: SwitchModel(model="big") if c.model == "small" else None, priority=5
        )
        hooks.add_before_llm(lambda c: later.append(c.model))
        await run(scenario({"text": "ok"}), hooks=hooks)
        assert ["big"] == later

    async def test_a_refused_hook_switch_ends_the_turn_as_its_cancel(self):
        """Fail closed: a hook asking for a model nobody serves aborts the turn."""
        hooks, _ = self.hooks(SwitchModel(model="gpt-9"))
        outcome, _, observer = await run(scenario({"text": "never"}), hooks=hooks)
        assert (
            TurnOutcomeKind.ABORTED,
            "LLM call cancelled by hook: model switch refused: unknown model",
        ) == (outcome.kind, outcome.text)
        assert [] == observer.of(LlmRequest)

    async def test_an_invalid_switch_cancels(self):
        """A switch without a model is a malformed decision: the request is cancelled."""
        hooks, _ = self.hooks(SwitchModel(model=""))
        outcome, _, _ = await run(scenario({"text": "never"}), hooks=hooks)
        assert TurnOutcomeKind.ABORTED == outcome.kind
        assert outcome.text.endswith("returned an invalid model switch")

    async def test_the_budget_is_not_charged_for_the_unsent_request(self):
        """A switched request is sent once: a one-iteration budget still answers."""
        hooks, _ = self.hooks(SwitchModel(model="big"))
        outcome, _, _ = await run(
            scenario({"text": "ok"}, max_tool_iterations=1, max_iteration_behavior="error_at_cap"),
            hooks=hooks,
        )
        assert (TurnOutcomeKind.FINAL, 1) == (outcome.kind, outcome.iterations)

    async def test_the_graceful_summary_can_be_switched(self):
        """At the cap a hook may send the summary request to another model."""

        def hook(call: HookLlmCall) -> Any:
            return SwitchModel(model="huge") if not call.tools else None

        hooks = Hooks()
        hooks.add_before_llm(hook)
        outcome, _, observer = await run(
            scenario(
                call("use_model", "c1", model="small"),
                {"text": "summary"},
                max_tool_iterations=1,
            ),
            hooks=hooks,
        )
        assert TurnOutcomeKind.MAX_ITERATIONS == outcome.kind
        assert [(1, "small"), (2, "huge")] == requested_models(observer)
        assert [(2, ModelSwitchSource.HOOK)] == [
            (e.iteration, e.source) for e in observer.of(ModelSwitched)
        ]


class TestCallback:
    async def test_a_text_protocol_model_gets_the_tool_instructions(self):
        """A callback may return a provider of the other protocol: from the switch on, the
        system message teaches the text protocol and the model's tags are calls."""
        data = scenario(call("use_model", "c1", model="text-model"), {"text": "back"})
        data["system_prompt"] = "Be brief."
        taught: list[tuple[str, bool]] = []
        hooks = Hooks()
        hooks.add_before_llm(
            lambda c: taught.append((c.model, "<tool_call>" in c.messages[0]["content"]))
        )
        replay = make_replay(
            data, observer=RecordingObserver(), extra_tools=[use_model], hooks=hooks
        )
        tag = '<tool_call>{"name": "use_model", "arguments": {"model": "small"}}</tool_call>'
        texts = ScriptedProvider(
            parse_scenario({"user": "x", "responses": [{"text": tag}]}, "t").responses,
            native_tools=False,
            model="text-model",
        )
        first = replay.execution.provider

        def callback(request: ModelSwitch, current: Provider) -> Provider:
            return texts if request.model == "text-model" else first

        replay.execution = dataclasses.replace(replay.execution, switch_model=callback)
        outcome = await replay.run()
        assert (TurnOutcomeKind.FINAL, "back") == (outcome.kind, outcome.text)
        assert [("small", False), ("text-model", True), ("small", False)] == taught
        assert [(1, "small"), (2, "text-model"), (3, "small")] == requested_models(
            replay.execution.observer
        )
        assert "<tool_call>" not in replay.state.messages[0]["content"]


class TestSurfaces:
    async def test_spans_name_each_call_s_model_under_one_turn_span(self):
        """Two `chat` spans with different `gen_ai.request.model` under one `invoke_agent`,
        which keeps the model the turn started on and carries the switch as an event."""
        traced = Traced()
        await run(
            scenario(call("use_model", "c1", model="big"), {"text": "ok"}),
            observer=traced.observer,
        )
        root = traced.root()
        chats = sorted(traced.named("chat"), key=lambda s: s.start_time)
        assert [("chat small", "small"), ("chat big", "big")] == [
            (s.name, s.attributes["gen_ai.request.model"]) for s in chats
        ]
        assert all(s.parent.span_id == root.context.span_id for s in chats)
        assert "small" == root.attributes["gen_ai.request.model"]
        (event,) = [e for e in root.events if e.name == "zeroclaw.model.switch"]
        assert {
            "zeroclaw.model.switch.source": "tool",
            "zeroclaw.iteration": 2,
            "zeroclaw.model.from": "small",
            "zeroclaw.model.to": "big",
            "zeroclaw.provider.from": "scripted",
            "zeroclaw.provider.to": "scripted",
        } == dict(event.attributes)

    async def test_a_secret_in_a_model_name_never_leaves(self):
        """Model names are operator payloads: a token in one is redacted on every surface."""
        secret_model = f"big-{SECRET}"
        data = scenario(call("use_model", "c1", model=secret_model), {"text": "ok"})
        data["provider"]["models"] = [secret_model]
        stream = io.StringIO()
        recording = RecordingObserver()
        logs = LogObserver(build_logger(redactor=Redactor(), stream=stream))
        traced = Traced()
        observer = MultiObserver([chained(traced.observer, logs), recording])
        await run(data, observer=observer)
        (switched,) = recording.of(ModelSwitched)
        assert "[REDACTED" in switched.to_model
        (line,) = [json.loads(x) for x in stream.getvalue().splitlines() if "model_switched" in x]
        assert ("model_switched", "small") == (line["event"], line["from_model"])
        spans = [
            (s.name, dict(s.attributes), [dict(e.attributes) for e in s.events])
            for s in traced.spans
        ]
        everything = stream.getvalue() + repr(recording.events) + repr(spans)
        assert SECRET not in everything

    async def test_the_log_line(self):
        """`model_switched` names both models and who asked, at info."""
        stream = io.StringIO()
        logs = LogObserver(build_logger(redactor=Redactor(), stream=stream))
        _, replay, _ = await run(
            scenario(call("use_model", "c1", model="big"), {"text": "ok"}), observer=logs
        )
        (line,) = [json.loads(x) for x in stream.getvalue().splitlines() if "model_switched" in x]
        assert {
            "event": "model_switched",
            "level": "info",
            "turn_id": replay.state.turn_id,
            "iteration": 2,
            "source": "tool",
            "from_provider": "scripted",
            "from_model": "small",
            "to_provider": "scripted",
            "to_model": "big",
        }.items() <= line.items()


async def test_concurrent_turns_switch_independently():
    """Each turn's switch is its own: two turns of one agent, one switching, run at once."""
    switching = make_replay(
        scenario(call("use_model", "c1", model="big"), {"text": "a"}),
        observer=RecordingObserver(),
        extra_tools=[use_model],
    )
    staying = make_replay(
        scenario(call("use_model", "c9", model="small"), {"text": "b"}),
        observer=RecordingObserver(),
        extra_tools=[use_model],
    )
    await asyncio.gather(switching.run(), staying.run())
    assert [(1, "small"), (2, "big")] == requested_models(switching.execution.observer)
    assert [(1, "small"), (2, "small")] == requested_models(staying.execution.observer)
