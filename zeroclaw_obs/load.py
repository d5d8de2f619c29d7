"""Load: replay a folder of scenarios continuously, at a rate, under a concurrency cap.

`zeroclaw-obs load` gives the telemetry stack realistic traffic. `run_load` starts turns at
`rate` per second across every scenario of a folder (round-robin in sorted order, or a seeded
random pick), each turn a fresh `build_replay` of one scenario reporting to the one observer of
the run, so spans, metrics and logs look like a busy agent's. It stops when `duration` ends or
when `LoadStop.request` is called (the CLI's SIGTERM and SIGINT handlers), lets the turns in
flight finish within a grace period and cancels the rest.

Risky parts:
- Memory over a long run. Nothing here is kept per turn: a turn's replay (its history, events,
  audit log and provider requests) is dropped when the turn ends, the counts are fixed-size
  tables, and failures are counted per scenario file. The telemetry behind the observer must be
  bounded too: the CLI switches the terminal trace tree off, which would keep turns.
- Back-pressure. At most `concurrency` turns run at once. When the cap is hit the next start
  waits for a free slot (counted in `delayed`) and the missed ticks are skipped, not queued, so
  a slow backend never builds a backlog of starts.
- Nobody is at the terminal. An interactive approval with no scripted answer left is a runtime
  denial (`NoOperator` is never available), never a read from stdin.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .approval import TerminalPrompter
from .config import RedactionSettings
from .errors import BadInputError, ConfigError
from .load_report import LoadProgress, LoadReport, StopReason, Tally, progress_line
from .observability.events import TurnOutcomeKind
from .observability.observer import MultiObserver, Observer
from .redaction import Redactor
from .replay import Replay, build_replay
from .scenario import Scenario, load_scenario

__all__ = [
    "SCENARIO_SUFFIXES",
    "LoadOptions",
    "LoadProgress",
    "LoadReport",
    "LoadScenario",
    "LoadSchedule",
    "LoadStop",
    "NoOperator",
    "StopReason",
    "build_load_replay",
    "common_redaction",
    "load_scenario_dir",
    "pick_scenarios",
    "progress_line",
    "run_load",
]


SCENARIO_SUFFIXES = (".yaml", ".yml", ".json")
"""The files of a scenario folder that are loaded; anything else is ignored."""


CANCEL_WAIT_S = 1.0
"""How long cancelled turns get to close their slots before their tasks are cancelled hard."""


class NoOperator(TerminalPrompter):
    """The terminal of a load run: never available, so an unanswered prompt is a runtime denial."""

    def is_available(self) -> bool:
        """Always False: nobody is at the terminal during a load run."""
        return False


@dataclass(frozen=True, slots=True)
class LoadScenario:
    """One validated scenario file of the folder."""

    source: str
    """The file, as named in errors and failure counts."""
    scenario: Scenario


@dataclass(frozen=True, kw_only=True)
class LoadOptions:
    """How fast, how long and how wide a load run goes.

    Raises:
        ValueError: a value is out of range; the message starts with the option's name
            (`rate: must be > 0, got 0`), which is also the CLI flag's name.
    """

    rate: float = 2.0
    """Turns started per second, across all scenarios."""
    duration: float = 0.0
    """Seconds to keep starting turns; 0 runs until `LoadStop.request`."""
    concurrency: int = 4
    """The most turns in flight at once."""
    seed: int | None = None
    """Pick scenarios at random from this seed; None picks them round-robin in sorted order."""
    grace: float = 3.0
    """Seconds the turns in flight get to finish when the run stops, before they are cancelled."""

    def __post_init__(self) -> None:
        if not (math.isfinite(self.rate) and self.rate > 0):
            raise ValueError(f"rate: must be a number > 0 (turns per second), got {self.rate}")
        if not (math.isfinite(self.duration) and self.duration >= 0):
            raise ValueError(
                f"duration: must be seconds >= 0 (0: until stopped), got {self.duration}"
            )
        if self.concurrency < 1:
            raise ValueError(f"concurrency: must be an integer >= 1, got {self.concurrency}")
        if not (math.isfinite(self.grace) and self.grace >= 0):
            raise ValueError(f"grace: must be seconds >= 0, got {self.grace}")


class LoadStop:
    """Tells a running load to stop; `request` is safe to call from a signal handler callback.

    An interrupt overrides an earlier graceful stop (a second signal cancels the grace period).
    """

    def __init__(self) -> None:
        self.reason: StopReason | None = None
        """The first reason given, or `INTERRUPTED` once an interrupt arrived."""
        self._requested = asyncio.Event()
        self._interrupted = asyncio.Event()

    def request(self, reason: StopReason) -> None:
        """Stop starting turns; with `INTERRUPTED`, cancel the turns in flight too."""
        if self.reason is None or reason is StopReason.INTERRUPTED:
            self.reason = reason
        self._requested.set()
        if reason is StopReason.INTERRUPTED:
            self._interrupted.set()

    async def requested(self) -> None:
        """Return once any stop was requested."""
        await self._requested.wait()

    async def interrupted(self) -> None:
        """Return once an interrupt was requested."""
        await self._interrupted.wait()


def load_scenario_dir(directory: Path) -> list[LoadScenario]:
    """Load and validate every `*.yaml`, `*.yml` and `*.json` file of `directory`, sorted by name.

    Raises:
        BadInputError: `directory` is missing, not a directory, or holds no scenario file.
        ConfigError: a file fails to load, or is an agent file (a real `provider.kind`); the
            message names the file and the field.
    """
    if not directory.exists():
        raise BadInputError(f"{directory}: scenario directory does not exist")
    if not directory.is_dir():
        raise BadInputError(f"{directory}: is not a directory")
    files = sorted(
        p for p in directory.iterdir() if p.suffix.lower() in SCENARIO_SUFFIXES and p.is_file()
    )
    if not files:
        raise BadInputError(
            f"{directory}: no scenario files ({', '.join('*' + s for s in SCENARIO_SUFFIXES)})"
        )
    loaded = [LoadScenario(str(path), load_scenario(path)) for path in files]
    for item in loaded:
        if item.scenario.provider.real:
            # Load traffic replays scripted turns offline: an agent file here would send a
            # real model hundreds of requests (and need its key) at the load's rate.
            raise ConfigError(
                f"{item.source}: provider.kind: load replays scripted scenarios only "
                "(an agent file with a real provider cannot be load traffic)"
            )
    return loaded


def common_redaction(scenarios: Sequence[LoadScenario]) -> RedactionSettings:
    """The redaction settings every scenario shares: a load run has one `Redactor`.

    Raises:
        ConfigError: two scenarios set different `config.redaction` tables; names the file.
    """
    first = scenarios[0].scenario.config.redaction
    for item in scenarios[1:]:
        if item.scenario.config.redaction != first:
            raise ConfigError(
                f"{item.source}: config.redaction: differs from {scenarios[0].source}'s; a load "
                "run has one redactor (set the [redaction] table in --config instead)"
            )
    return first


def build_load_replay(
    item: LoadScenario,
    *,
    observer: Observer,
    redactor: Redactor,
    receipt_key: bytes | None = None,
    terminal: TerminalPrompter | None = None,
) -> Replay:
    """One turn of a load run: a fresh replay of `item`, with nobody at the terminal.

    Args:
        item: the scenario to replay.
        observer: the run's telemetry.
        redactor: the run's one redactor.
        receipt_key: the operator's receipt key; a fresh random key per turn when None.
        terminal: the approval prompt; a `NoOperator` (never available) when None.
    """
    return build_replay(
        item.scenario,
        source=item.source,
        observer=observer,
        redactor=redactor,
        receipt_key=receipt_key,
        terminal=terminal or NoOperator(),
    )


def pick_scenarios(scenarios: Sequence[LoadScenario], seed: int | None) -> Iterator[LoadScenario]:
    """The endless sequence in which turns pick their scenario.

    Round-robin in the given (sorted) order when `seed` is None; otherwise uniform picks from
    `random.Random(seed)`, so one seed always gives the same sequence.
    """
    if seed is None:
        return itertools.cycle(scenarios)
    rng = random.Random(seed)
    return (rng.choice(scenarios) for _ in itertools.count())


async def run_load(
    scenarios: Sequence[LoadScenario],
    options: LoadOptions,
    *,
    observer: Observer,
    redactor: Redactor,
    receipt_key: bytes | None = None,
    progress: LoadProgress | None = None,
    stop: LoadStop | None = None,
) -> LoadReport:
    """Replay `scenarios` at `options.rate` until the duration ends or `stop` is requested.

    Args:
        scenarios: validated scenarios (`load_scenario_dir`); at least one.
        options: rate, duration, concurrency, pick order and grace period.
        observer: the run's telemetry; every turn reports to it.
        redactor: the run's one redactor, shared by every turn.
        receipt_key: the operator's receipt key; a fresh random key per turn when None.
        progress: where the progress line goes; None writes none.
        stop: how the caller stops an endless run (or one before its duration).

    Returns:
        The counts, with the reason the run stopped.

    Raises:
        ValueError: `scenarios` is empty.
    """
    if not scenarios:
        raise ValueError("run_load needs at least one scenario")
    driver = _LoadDriver(
        scenarios,
        options,
        observer=observer,
        redactor=redactor,
        receipt_key=receipt_key,
        progress=progress,
        stop=stop or LoadStop(),
    )
    return await driver.run()


class LoadSchedule:
    """What every load run shares, in-process or against a server (`load_http.py`): the start
    schedule at `rate` under the `concurrency` cap, the stop, the grace at the end, the counts
    and the progress line. A subclass starts one turn (`_start_one`), says which are in flight
    (`_in_flight`) and ends what the grace left (`_drain`)."""

    def __init__(
        self,
        scenarios: Sequence[LoadScenario],
        options: LoadOptions,
        *,
        progress: LoadProgress | None,
        stop: LoadStop,
    ) -> None:
        self._options = options
        self._picks = pick_scenarios(scenarios, options.seed)
        self._tally = Tally()
        self._progress = progress
        self._stop = stop
        self._slots = asyncio.Semaphore(options.concurrency)
        self._loop = asyncio.get_running_loop()
        self._started_at = self._loop.time()

    def report(self) -> LoadReport:
        """The counts so far."""
        return self._tally.report(self._loop.time() - self._started_at, self._stop.reason)

    async def run(self) -> LoadReport:
        refresher = asyncio.create_task(self._refresh()) if self._progress else None
        scheduler = asyncio.create_task(self._schedule())
        stopped = asyncio.create_task(self._stop.requested())
        try:
            await asyncio.wait({scheduler, stopped}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            # The caller gave up on the run: its turns are cancelled now, not after the grace.
            self._stop.request(StopReason.INTERRUPTED)
            raise
        finally:
            for task in (scheduler, stopped):
                task.cancel()
            await asyncio.gather(scheduler, stopped, return_exceptions=True)
            try:
                await self._drain()
            finally:
                if refresher is not None:
                    refresher.cancel()
                    await asyncio.gather(refresher, return_exceptions=True)
        error = None if scheduler.cancelled() else scheduler.exception()
        if error is not None:
            raise error  # a bug in the schedule, raised once the turns are drained
        report = self.report()
        if self._progress is not None:
            self._progress.finish(progress_line(report))
        return report

    async def _schedule(self) -> None:
        """Start turns until `duration` ends (which requests the stop itself) or cancelled."""
        try:
            async with asyncio.timeout(self._options.duration or None):
                await self._start_turns()
        except TimeoutError:
            self._stop.request(StopReason.DURATION)

    async def _start_turns(self) -> None:
        interval = 1 / self._options.rate
        next_at = self._loop.time()
        while True:
            await asyncio.sleep(max(0.0, next_at - self._loop.time()))
            if self._slots.locked():
                self._tally.delayed += 1
            await self._slots.acquire()
            self._tally.turn_started()
            self._start_one(next(self._picks))
            # A start that waited for a slot moves the schedule on: missed ticks are skipped.
            next_at = max(next_at + interval, self._loop.time())

    def _start_one(self, item: LoadScenario) -> None:
        """Start one turn of `item` as a task that releases its slot when done."""
        raise NotImplementedError

    def _in_flight(self) -> set[asyncio.Task[Any]]:
        raise NotImplementedError

    async def _drain(self) -> None:
        """End the turns in flight: wait out the grace (`_wait_for_grace`), then stop them."""
        raise NotImplementedError

    async def _wait_for_grace(self) -> None:
        """Let the turns in flight finish within `grace`; an interrupt, before or during the
        grace period, ends the wait at once."""
        interrupted = asyncio.create_task(self._stop.interrupted())
        deadline = self._loop.time() + self._options.grace
        try:
            while self._in_flight() and not interrupted.done():
                remaining = deadline - self._loop.time()
                if remaining <= 0:
                    break
                await asyncio.wait(
                    {*self._in_flight(), interrupted},
                    timeout=remaining,
                    return_when=asyncio.FIRST_COMPLETED,
                )
        finally:
            interrupted.cancel()

    async def _refresh(self) -> None:
        assert self._progress is not None
        while True:
            await asyncio.sleep(self._progress.interval_s)
            self._progress.update(progress_line(self.report()))


class _LoadDriver(LoadSchedule):
    """One in-process load run: each turn a fresh replay of its scenario."""

    def __init__(
        self,
        scenarios: Sequence[LoadScenario],
        options: LoadOptions,
        *,
        observer: Observer,
        redactor: Redactor,
        receipt_key: bytes | None,
        progress: LoadProgress | None,
        stop: LoadStop,
    ) -> None:
        super().__init__(scenarios, options, progress=progress, stop=stop)
        self._observer = MultiObserver((observer, self._tally))
        self._redactor = redactor
        self._receipt_key = receipt_key
        self._terminal = NoOperator()
        self._turns: dict[asyncio.Task[TurnOutcomeKind | None], tuple[LoadScenario, Replay]] = {}

    def _in_flight(self) -> set[asyncio.Task[Any]]:
        return set(self._turns)

    def _start_one(self, item: LoadScenario) -> None:
        replay = build_load_replay(
            item,
            observer=self._observer,
            redactor=self._redactor,
            receipt_key=self._receipt_key,
            terminal=self._terminal,
        )
        task = asyncio.create_task(self._run_turn(replay), name=f"load-turn {item.source}")
        self._turns[task] = (item, replay)
        task.add_done_callback(self._turn_done)

    @staticmethod
    async def _run_turn(replay: Replay) -> TurnOutcomeKind | None:
        """The turn's outcome, or None when it raised (the message could quote the script)."""
        try:
            return (await replay.run()).kind
        except Exception:
            return None
        finally:
            await replay.execution.provider.aclose()

    def _turn_done(self, task: asyncio.Task[TurnOutcomeKind | None]) -> None:
        # A done callback, not the turn's `finally`: a task cancelled before its first step
        # never runs its body, and its slot and count must still come back.
        item, _ = self._turns.pop(task)
        self._slots.release()
        if task.cancelled():
            outcome: TurnOutcomeKind | None = TurnOutcomeKind.CANCELLED
        else:
            outcome = None if task.exception() is not None else task.result()
        self._tally.turn_ended(outcome, item.source)

    async def _drain(self) -> None:
        """Let the turns in flight finish within `grace`, then cancel the rest."""
        await self._wait_for_grace()
        # A graceful cancel first: each turn closes its open slots as interrupted and ends as
        # cancelled, so its spans and metrics are complete; a hard cancel only if that stalls.
        for _, replay in self._turns.values():
            replay.state.cancellation.cancel()
        if self._turns:
            await asyncio.wait(set(self._turns), timeout=CANCEL_WAIT_S)
        for task in self._turns:
            task.cancel()
        if self._turns:
            await asyncio.wait(set(self._turns), timeout=CANCEL_WAIT_S)
