"""`make bench`, part 4: our OpenAI provider against the official `openai` SDK, on one stream.

Side by side, in one run, on the same loopback server (`tests/providers/wire.py`) and the same
recorded-shape stream: a 51-event `chat.completion.chunk` stream (two parallel tool calls whose
arguments arrive in 23 pieces each, a finish chunk, the `include_usage` chunk and `[DONE]`,
in the shapes pydantic-ai's recorded gpt-4o-mini cassettes hold). Each side turns it into its
final object: ours a `ProviderResponse` (`OpenAIProvider.complete`), the SDK a
`ChatCompletion` (`chat.completions.stream(...).get_final_completion()`). Both keep one pooled
connection and send the same request; the server's own time is in both figures alike.

Target (issue 11): no slower than the SDK. An information row times the SDK's raw chunk
iterator (`create(stream=True)`, no assembly into a completion), the SDK's floor on this
stream. Figures are reported, not asserted: exit 0.

    .venv/bin/python benchmarks/providers.py [--runs 200]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.providers.test_openai import MESSAGES, call_delta, chunk, usage_chunk
from tests.providers.wire import DONE, Reply, WireServer
from zeroclaw_obs.providers.base import ProviderRequest
from zeroclaw_obs.providers.openai import OpenAIProvider

MODEL = "gpt-4o-mini"
WARMUP = 20


def stream() -> list[bytes]:
    """The 51 events: two calls opened, 23 argument pieces each, finish, usage, `[DONE]`."""
    events = [
        chunk({"role": "assistant", "content": None, **call_delta(0, "call_a", "get_weather", "")}),
        chunk(call_delta(1, "call_b", "get_time", "")),
    ]
    for i in range(23):
        first, last = i == 0, i == 22
        events.append(
            chunk(call_delta(0, None, None, '{"city":"P' if first else ('"}' if last else "x")))
        )
        events.append(
            chunk(call_delta(1, None, None, '{"tz":"U' if first else ('"}' if last else "y")))
        )
    events += [chunk({}, "tool_calls"), usage_chunk(), DONE]
    return events


async def timed(
    wire: WireServer, events: list[bytes], run: Callable[[], Awaitable[None]], runs: int
) -> list[float]:
    for _ in range(WARMUP):
        wire.script(Reply.stream(events))
        await run()
    times = []
    for _ in range(runs):
        wire.script(Reply.stream(events))
        start = time.perf_counter()
        await run()
        times.append(time.perf_counter() - start)
    return times


async def measure(runs: int) -> dict[str, list[float]]:
    import openai

    wire = WireServer()
    wire.start()
    events = stream()
    ours = OpenAIProvider(base_url=f"{wire.url}/v1", model=MODEL, api_key="bench-key")
    sdk = openai.AsyncOpenAI(base_url=f"{wire.url}/v1", api_key="bench-key", max_retries=0)
    request = ProviderRequest(messages=MESSAGES)

    async def run_ours() -> None:
        response = await ours.complete(request)
        assert 2 == len(response.tool_calls)

    async def run_sdk() -> None:
        async with sdk.chat.completions.stream(
            model=MODEL, messages=MESSAGES, stream_options={"include_usage": True}
        ) as streamed:
            completion = await streamed.get_final_completion()
        assert 2 == len(completion.choices[0].message.tool_calls or [])

    async def run_sdk_raw() -> None:
        chunks = await sdk.chat.completions.create(
            model=MODEL, messages=MESSAGES, stream=True, stream_options={"include_usage": True}
        )
        async for _ in chunks:
            pass

    runners = {
        "zeroclaw-obs OpenAIProvider": run_ours,
        "openai SDK": run_sdk,
        "openai SDK, raw chunks (info)": run_sdk_raw,
    }
    results: dict[str, list[float]] = {name: [] for name in runners}
    try:
        for _ in range(2):  # interleaved halves, so drift on a shared machine hits all
            for name, run in runners.items():
                results[name] += await timed(wire, events, run, runs // 2)
    finally:
        await ours.aclose()
        await sdk.close()
        wire.stop()
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    try:
        import openai
    except ImportError:
        print("providers: the `openai` SDK is not installed (pip install -e '.[bench]'); skipped")
        return 0
    results = asyncio.run(measure(args.runs))
    print(
        f"Provider: a 51-event stream with two tool calls → final object, loopback, "
        f"{args.runs} runs (openai {openai.__version__})"
    )
    print(f"{'client':<32}{'median ms':>12}{'p95 ms':>10}")
    medians = {}
    for name, times in results.items():
        ordered = sorted(times)
        medians[name] = statistics.median(ordered)
        p95 = ordered[int(len(ordered) * 0.95) - 1]
        print(f"{name:<32}{medians[name] * 1e3:>12.2f}{p95 * 1e3:>10.2f}")
    ours, sdk = medians["zeroclaw-obs OpenAIProvider"], medians["openai SDK"]
    verdict = "PASS" if ours <= sdk else "MISS"
    print(
        f"{verdict}  no slower than the SDK: {ours * 1e3:.2f} ms vs {sdk * 1e3:.2f} ms "
        f"({sdk / ours:.1f}× faster)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
