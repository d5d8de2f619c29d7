"""cProfile of one benchmark turn: the hot functions, then the time of each engine step.

`profile_turn` packs a fresh turn into a runnable that `print_profile` runs under cProfile
(gc off); the step table sums the cumulative time of the functions in `STEPS` per call.
"""

from __future__ import annotations

import asyncio
import cProfile
import gc
import io
import pstats
from collections.abc import Callable
from typing import Any

from harness import TurnShape, build_turn, run_turn
from report import US

from zeroclaw_obs.tools.base import Tool

__all__ = ["STEPS", "print_profile", "profile_turn"]

# (label, files, functions) of the engine steps the per-call path goes through; `|` separates
# alternatives (cProfile names files by their base name).
STEPS = (
    ("provider request + retries + LlmRequest/LlmResponse", "provider_call.py", "request_model"),
    ("parse", "parse.py", "parse_response"),
    ("prepare: resolve, validate, gate, dedup key", "prep.py", "prepare_calls"),
    ("dispatch, per call (all of the below)", "dispatch.py", "_run"),
    ("  open: card, ToolCallStart, args redact+JSON", "results.py", "open"),
    ("  asyncio.timeout enter + exit", "timeouts.py", "__aenter__|__aexit__"),
    ("  the tool's own execute()", "harness.py|base.py", "execute"),
    ("  loop detection: key + record", "dispatch.py", "_detect_loop"),
    ("  close: truncate, redact, tool_result, ToolCall", "results.py", "close"),
    ("history append", "history.py", "append_round"),
)


def profile_turn(
    shape: TurnShape, make_tool: Callable[[], Tool], **kwargs: Any
) -> tuple[Callable[[], None], int]:
    """A runnable of one fresh turn of `shape` for cProfile, and its number of calls."""

    def run() -> None:
        replay = build_turn(shape, make_tool(), **kwargs)
        asyncio.run(run_turn(replay))

    return run, shape.total_calls


def print_profile(title: str, run: Callable[[], Any], calls: int, top: int = 20) -> None:
    """cProfile `run`: the top functions by own time, then the time of each engine step."""
    profiler = cProfile.Profile()
    gc.disable()
    try:
        profiler.enable()
        run()
        profiler.disable()
    finally:
        gc.enable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.strip_dirs().sort_stats("tottime").print_stats(top)
    print(f"\n--- cProfile: {title} (top {top} by own time) ---")
    lines = out.getvalue().splitlines()
    start = next((i for i, s in enumerate(lines) if "ncalls" in s), 0)
    print("\n".join(lines[start:]).rstrip())
    total = stats.total_tt  # type: ignore[attr-defined]
    table: dict[tuple[str, int, str], tuple] = stats.stats  # type: ignore[attr-defined]
    print(
        f"\n    {'engine step (cumulative time under cProfile)':<50} {'µs/call':>7}  share of turn"
    )
    for label, filenames, functions in STEPS:
        files, wanted = filenames.split("|"), functions.split("|")
        cumulative = sum(
            entry[3] for (f, _, fn), entry in table.items() if f in files and fn in wanted
        )
        print(f"    {label:<50} {cumulative / calls * US:7.1f}  {cumulative / total:6.1%}")
