"""`make bench`, server part: 200 concurrent scripted turns through `zeroclaw-obs serve` vs the
same 200 turns in this process.

Side by side, on the same scripted scenario (one response of two no-delay tool calls, then the
answer; every turn replays it from the start):
- *in-process*: `zeroclaw_obs.replay.build_replay` + `Replay.run`, like `benchmarks/run.py`,
  with the telemetry `serve` sets up (metrics registry and spans, no exporter, no trace tree),
  200 turns started at once with `asyncio.gather`;
- *serve*: a real `zeroclaw-obs serve` subprocess on a loopback port, 200 turns started at once,
  each `POST /v1/turns` (a fresh conversation) then its `GET /v1/turns/{id}/events` stream read
  to `turn_end`, on one new keep-alive connection per turn. The client is a minimal HTTP/1.1
  client on asyncio streams (`RawClient`), because an `httpx.AsyncClient` holding 200 streams
  at once costs ~25 ms of client CPU per turn (its pool is scanned per request) and would be
  what is measured: the server spends ~2 ms of CPU per turn. The `httpx` figure is printed
  too, as information for `load --target` sizing.

A turn's wall time is from its start (the `run()` call; the `POST`) to its end (`run()`
returning; `turn_end` read by the client). Figures: turns per second (200 / the round's wall
time), p50 and p99 of the turns' wall times, and the server's added latency per turn (its p50 /
p99 minus the in-process p50 / p99). Under 200 concurrent turns a turn's wall time is mostly
its wait for the others (in-process turns with no delay barely interleave, so theirs stays
small), so the same figures are also given for 100 turns run one at a time: the added latency
of a turn on its own (HTTP, SSE, the server's runtime). Both sides run two rounds, interleaved;
the figures are the second round's.

Memory: the server's RSS (`/proc/PID/status` VmRSS) idle, after 2,000 warm-up turns (the
server keeps the last 1,000 finished turns readable by design: that buffer fills first, and
the allocator settles over the next 1,000), after each measured round, and after the round's
conversations were evicted (`--conversation-idle-s 1`, a wait, then one turn, since eviction
runs when a turn starts). Flat means round 2 ends where round 1 did.

Figures are reported, not asserted: exit 0. Bounded: well under 2 min (each wait has a
deadline). Linux only (`/proc`).

    .venv/bin/python benchmarks/server.py [--turns 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
import yaml

from zeroclaw_obs.config import build_redactor
from zeroclaw_obs.load import NoOperator
from zeroclaw_obs.observability.telemetry import TelemetryOptions, setup_telemetry
from zeroclaw_obs.replay import build_replay
from zeroclaw_obs.scenario import Scenario, parse_scenario

SCRIPT = Path(sys.executable).parent / "zeroclaw-obs"
TOKEN = "bench-token-0123456789abcdef"
IDLE_S = 1.0
"""`--conversation-idle-s`: short, so the conversations of a round are evicted before the next."""
START_DEADLINE_S = 30.0
KEPT_TURNS = 1000
"""Finished turns `serve` keeps readable (`ServeSettings.keep_finished_turns`)."""
WARM_UP_TURNS = 2 * KEPT_TURNS
"""Turns run before the measured rounds: the finished-turn buffer fills at 1,000, and the
allocator settles over the next ~1,000 (RSS then moves by < 0.5 MiB per 200 turns)."""
SEQUENTIAL = 100
"""Turns run one at a time on each side, for the added latency of a turn on its own."""
SCENARIO: dict[str, Any] = {
    "user": "Look both keys up.",
    "agent": {"alias": "bench"},
    "config": {"approval": {"auto_approve": ["lookup"]}},
    "tools": [
        {
            "name": "lookup",
            "description": "Look a key up",
            "parameters": {
                "type": "object",
                "properties": {"key": {"type": "string"}},
                "required": ["key"],
            },
            "responses": [{"default": {"output": "found"}}],
        }
    ],
    "responses": [
        {
            "tool_calls": [
                {"id": "call_a", "name": "lookup", "arguments": {"key": "a"}},
                {"id": "call_b", "name": "lookup", "arguments": {"key": "b"}},
            ]
        },
        {"text": "Both keys found."},
    ],
}


# --------------------------------------------------------------------------------------------
# In-process
# --------------------------------------------------------------------------------------------


class InProcess:
    """Turns replayed in this process, with the telemetry `serve` would set up."""

    def __init__(self, scenario: Scenario) -> None:
        self._scenario = scenario
        self._redactor = build_redactor(scenario.config.redaction, "bench")
        self._telemetry = setup_telemetry(
            TelemetryOptions(trace_tree=False, env={}), redactor=self._redactor
        )

    async def turn(self) -> float:
        replay = build_replay(
            self._scenario,
            source="bench",
            observer=self._telemetry.observer,
            redactor=self._redactor,
            terminal=NoOperator(),
        )
        start = time.perf_counter()
        outcome = await replay.run()
        wall = time.perf_counter() - start
        await replay.execution.provider.aclose()
        assert outcome.ok, outcome
        return wall

    async def round(self, turns: int) -> tuple[float, list[float]]:
        start = time.perf_counter()
        walls = await asyncio.gather(*(self.turn() for _ in range(turns)))
        return time.perf_counter() - start, list(walls)

    def close(self) -> None:
        self._telemetry.shutdown(timeout_s=1.0)


# --------------------------------------------------------------------------------------------
# Serve
# --------------------------------------------------------------------------------------------


class Served:
    """A `zeroclaw-obs serve` subprocess on a free loopback port."""

    def __init__(self, scenario_path: Path, token_file: Path, turns: int) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
        self.process = subprocess.Popen(
            [str(SCRIPT), "serve", "--scenario", str(scenario_path), "--port", "0",
             "--token-file", str(token_file), "--quiet",
             "--conversation-idle-s", str(IDLE_S), "--max-running-turns", str(max(256, turns))],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
        self.url = ""
        self.stderr: list[str] = []
        found = threading.Event()

        def read() -> None:
            assert self.process.stderr is not None
            for line in self.process.stderr:
                self.stderr.append(line.rstrip("\n"))
                match = re.search(r"serving on (http://\S+)", line)
                if match and not found.is_set():
                    self.url = match.group(1)
                    found.set()
            found.set()

        threading.Thread(target=read, daemon=True).start()
        if not found.wait(START_DEADLINE_S) or not self.url:
            self.process.kill()
            raise SystemExit("serve did not start: " + " | ".join(self.stderr))

    def rss_kib(self) -> int:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        return int(re.search(r"^VmRSS:\s+(\d+) kB", status, re.M).group(1))

    def stop(self) -> int:
        self.process.terminate()
        try:
            return self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()


class RawClient:
    """Just enough HTTP/1.1 for this benchmark: a JSON POST, then an event stream read until
    `turn_end`, on one connection. Not a general client (no redirects, no TLS)."""

    def __init__(self, url: str) -> None:
        parts = httpx.URL(url)
        self._host, self._port = parts.host, parts.port
        self._auth = f"Authorization: Bearer {TOKEN}\r\nHost: {parts.host}\r\n".encode()

    async def turn(self) -> float:
        start = time.perf_counter()
        reader, writer = await asyncio.open_connection(self._host, self._port)
        try:
            body = json.dumps({"message": SCENARIO["user"]}).encode()
            writer.write(
                b"POST /v1/turns HTTP/1.1\r\n" + self._auth
                + b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
                + body
            )  # fmt: skip
            head = await reader.readuntil(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 202"), head
            length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))
            turn_id = json.loads(await reader.readexactly(length))["turn_id"]
            request = f"GET /v1/turns/{turn_id}/events HTTP/1.1\r\n".encode()
            writer.write(request + self._auth + b"\r\n")
            head = await reader.readuntil(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 200"), head
            seen = b""
            while (end := re.search(rb'"turn_end".*?\n', seen)) is None:
                chunk = await reader.read(65536)
                if not chunk:
                    raise AssertionError(f"turn {turn_id}: the stream ended before turn_end")
                seen = seen[-4096:] + chunk
            wall = time.perf_counter() - start
            assert b'"final"' in end.group(), end.group()
            return wall
        finally:
            writer.close()

    async def round(self, turns: int) -> tuple[float, list[float]]:
        start = time.perf_counter()
        walls = await asyncio.gather(*(self.turn() for _ in range(turns)))
        return time.perf_counter() - start, list(walls)


async def served_turn(client: httpx.AsyncClient) -> float:
    start = time.perf_counter()
    started = await client.post("/v1/turns", json={"message": SCENARIO["user"]})
    assert 202 == started.status_code, started.text
    turn_id = started.json()["turn_id"]
    async with client.stream("GET", f"/v1/turns/{turn_id}/events") as stream:
        async for line in stream.aiter_lines():
            if line.startswith("data: ") and '"turn_end"' in line:
                event = json.loads(line[len("data: ") :])
                wall = time.perf_counter() - start
                assert "final" == event["outcome"], event
                return wall
    raise AssertionError(f"turn {turn_id}: the stream ended before turn_end")


async def served_round(client: httpx.AsyncClient, turns: int) -> tuple[float, list[float]]:
    start = time.perf_counter()
    walls = await asyncio.gather(*(served_turn(client) for _ in range(turns)))
    return time.perf_counter() - start, list(walls)


async def evict(client: RawClient) -> None:
    """Wait past the idle time, then start one turn: eviction runs when a turn starts."""
    await asyncio.sleep(IDLE_S + 0.5)
    await client.turn()


# --------------------------------------------------------------------------------------------
# Run and report
# --------------------------------------------------------------------------------------------


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def measure(turns: int, workdir: Path) -> dict[str, Any]:
    scenario_path = workdir / "bench.yaml"
    scenario_path.write_text(yaml.safe_dump(SCENARIO))
    token_file = workdir / "token"
    token_file.write_text(TOKEN + "\n")
    scenario = parse_scenario(SCENARIO, "bench")
    local = InProcess(scenario)
    served = Served(scenario_path, token_file, turns)
    rss: list[tuple[str, int]] = []
    results: dict[str, Any] = {"rss": rss}
    limits = httpx.Limits(max_connections=2 * turns + 8, max_keepalive_connections=2 * turns + 8)
    try:
        async with httpx.AsyncClient(
            base_url=served.url,
            headers={"Authorization": f"Bearer {TOKEN}"},
            timeout=httpx.Timeout(60.0, pool=None),
            limits=limits,
        ) as client:
            raw = RawClient(served.url)
            await raw.turn()  # the server's first turn imports what turns need
            await local.turn()
            rss.append(("idle, after one turn", served.rss_kib()))
            for _ in range(-(-WARM_UP_TURNS // turns)):
                await raw.round(turns)
            rss.append((f"after {WARM_UP_TURNS} warm-up turns", served.rss_kib()))
            results["local_seq"] = [await local.turn() for _ in range(SEQUENTIAL)]
            results["served_seq"] = [await raw.turn() for _ in range(SEQUENTIAL)]
            await evict(raw)
            rss.append(("before round 1", served.rss_kib()))
            for number in (1, 2):
                results[f"local{number}"] = await local.round(turns)
                results[f"served{number}"] = await raw.round(turns)
                rss.append((f"after round {number} ({turns} turns)", served.rss_kib()))
                await evict(raw)
                rss.append((f"after round {number}'s conversations were evicted", served.rss_kib()))
            results["httpx"] = await served_round(client, turns)
    finally:
        local.close()
        results["exit"] = served.stop()
    return results


def report(turns: int, results: dict[str, Any]) -> None:
    local_wall, local = results["local2"]
    served_wall, served = results["served2"]
    print(
        f"Server: {turns} concurrent scripted turns (2 tool calls each), serve over loopback "
        "HTTP vs in-process; round 2 of 2"
    )
    print(f"{'figure':<34}{'in-process':>12}{'serve':>12}{'added':>12}")
    print(
        f"{'turns per second':<34}{turns / local_wall:>12.0f}{turns / served_wall:>12.0f}{'':>12}"
    )
    for label, q in (("turn wall time p50 (ms)", 0.5), ("turn wall time p99 (ms)", 0.99)):
        a, b = quantile(local, q) * 1e3, quantile(served, q) * 1e3
        print(f"{label:<34}{a:>12.1f}{b:>12.1f}{b - a:>12.1f}")
    mean_added = (statistics.mean(served) - statistics.mean(local)) * 1e3
    print(f"{'turn wall time mean (ms)':<34}{'':>12}{'':>12}{mean_added:>12.1f}")
    local_seq, served_seq = results["local_seq"], results["served_seq"]
    for label, q in (("one at a time, p50 (ms)", 0.5), ("one at a time, p99 (ms)", 0.99)):
        a, b = quantile(local_seq, q) * 1e3, quantile(served_seq, q) * 1e3
        print(f"{label:<34}{a:>12.2f}{b:>12.2f}{b - a:>12.2f}")
    local1_wall, _ = results["local1"]
    served1_wall, _ = results["served1"]
    print(f"(round 1, warming up: {turns / local1_wall:.0f} vs {turns / served1_wall:.0f} turns/s)")
    httpx_wall, httpx_walls = results["httpx"]
    print(
        f"(serve with one httpx.AsyncClient as the client instead: {turns / httpx_wall:.0f} "
        f"turns/s, p50 {quantile(httpx_walls, 0.5) * 1e3:.0f} ms: the client is the bottleneck)"
    )
    print("\nserve RSS (/proc/PID/status VmRSS):")
    for label, kib in results["rss"]:
        print(f"  {label:<50}{kib / 1024:>8.1f} MiB")
    rss = dict(results["rss"])
    first = rss[f"after round 1 ({turns} turns)"]
    second = rss[f"after round 2 ({turns} turns)"]
    print(f"  round 2 vs round 1: {(second - first) / 1024:+.1f} MiB")
    print(f"serve exited {results['exit']} on SIGTERM")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    args = parser.parse_args()
    if not Path("/proc/self/status").exists():
        print("server: needs /proc (Linux) for the RSS figures; skipped")
        return 0
    with tempfile.TemporaryDirectory() as workdir:
        results = asyncio.run(measure(args.turns, Path(workdir)))
    report(args.turns, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
