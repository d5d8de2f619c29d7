"""Memory across one long turn: tracemalloc samples at each provider request, growth by site.

`memory_run` builds one turn of wide-output calls, samples the traced bytes at every provider
request (so the growth of the first and second half of the turn can be compared), and diffs a
snapshot taken before the turn with one taken after it to name the allocation sites that grew.
`deep_size` measures what the history list itself holds.
"""

from __future__ import annotations

import gc
import os
import sys
import tracemalloc
from dataclasses import dataclass
from typing import Any

from harness import TurnShape, WideOutputTool, build_turn, run_turn

from zeroclaw_obs.providers.base import ProviderRequest

__all__ = ["MemoryRun", "deep_size", "memory_run", "short_path"]


def deep_size(root: Any) -> int:
    """Bytes of a JSON-like structure (dicts, lists, tuples, strings, numbers), shared once."""
    seen: set[int] = set()
    stack = [root]
    total = 0
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj)
        if isinstance(obj, dict):
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif isinstance(obj, list | tuple):
            stack.extend(obj)
    return total


def short_path(filename: str) -> str:
    """`zeroclaw_obs/turn/x.py` inside the repo, `asyncio/x.py` for the standard library."""
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if filename.startswith(repo + os.sep):
        return os.path.relpath(filename, repo)
    return os.path.join(*filename.split(os.sep)[-2:])


@dataclass
class MemoryRun:
    calls: int
    first_half: float
    """Bytes of growth per 1,000 calls over calls 0 … n/2."""
    second_half: float
    """Bytes of growth per 1,000 calls over calls n/2 … n."""
    retained_per_call: float
    history_per_call: float
    final: int
    """Bytes traced when the turn ended (allocated since tracing started, turn set-up included)."""
    peak: int
    peak_over_final: int
    growth_sites: list[str]


async def memory_run(
    *,
    calls: int,
    per_iteration: int,
    output: int,
    cap: int,
    keep_events: bool,
    provider_yields: bool = False,
) -> MemoryRun:
    shape = TurnShape(calls // per_iteration, per_iteration)
    samples: dict[int, int] = {}

    def sample(request: ProviderRequest) -> None:
        done = (request.iteration - 1) * per_iteration
        samples[done] = tracemalloc.get_traced_memory()[0]

    gc.collect()
    tracemalloc.start(1)
    try:
        replay = build_turn(
            shape,
            WideOutputTool(output),
            max_tool_result_chars=cap,
            keep_events=keep_events,
            on_request=sample,
            provider_yields=provider_yields,
        )
        before = tracemalloc.take_snapshot()
        tracemalloc.reset_peak()
        gc.disable()
        try:
            await run_turn(replay)
        finally:
            gc.enable()
        final, peak = tracemalloc.get_traced_memory()
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    half = calls // 2
    start, middle, end = samples[0], samples[half], samples[calls]
    ignore = [tracemalloc.Filter(False, tracemalloc.__file__)]
    diff = after.filter_traces(ignore).compare_to(before.filter_traces(ignore), "lineno")
    sites = []
    for stat in diff[:8]:
        if stat.size_diff <= 0:
            continue
        frame = stat.traceback[0]
        where = short_path(frame.filename)
        sites.append(
            f"{where}:{frame.lineno}  +{stat.size_diff / calls:,.0f} B/call "
            f"({stat.count_diff / calls:.1f} blocks/call)"
        )
    history = deep_size(replay.state.messages)
    return MemoryRun(
        calls=calls,
        first_half=(middle - start) / half * 1000,
        second_half=(end - middle) / (calls - half) * 1000,
        retained_per_call=(end - start) / calls,
        history_per_call=history / calls,
        final=final,
        peak=peak,
        peak_over_final=peak - final,
        growth_sites=sites,
    )
