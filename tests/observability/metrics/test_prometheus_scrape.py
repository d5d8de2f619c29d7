"""A real Prometheus scrapes `serve_metrics` and stores our series and exemplars.

Needs the `prometheus` binary (Debian package `prometheus`; see `tests/system.py`). Every wait
is bounded by `DEADLINE_S`, and Prometheus is stopped in a `finally` block.
"""

from __future__ import annotations

import time
from typing import Any

import httpx
from prometheus_client import CollectorRegistry

from zeroclaw_obs.observability.metrics.exposition import serve_metrics
from zeroclaw_obs.observability.metrics.metrics import MetricsObserver

from ...builders import HashSpanIds, chained, mixed_turn
from ...receivers import DEADLINE_S, poll, start_prometheus
from ...system import free_port, stop, system_binary


class TestPrometheusScrape:
    async def test_prometheus_stores_series_and_trace_exemplars(self, run_scenario, tmp_path):
        """Prometheus scrapes the tool histogram and keeps an exemplar with our trace id."""
        system_binary("prometheus")
        registry = CollectorRegistry()
        spans = HashSpanIds()
        observer = chained(spans, MetricsObserver(registry))
        turn_ids = [(await run_scenario(mixed_turn(), observer=observer))[0].turn_id]
        turn_ids.append((await run_scenario(mixed_turn(), observer=observer))[0].turn_id)
        server = serve_metrics(registry)
        web_port = free_port()
        process = start_prometheus(tmp_path, server.port, web_port)
        api = f"http://127.0.0.1:{web_port}/api/v1"
        log = tmp_path / "prometheus.log"
        deadline = time.monotonic() + DEADLINE_S
        try:
            async with httpx.AsyncClient(timeout=5) as client:

                async def series() -> list[dict[str, Any]]:
                    query = {"query": "zeroclaw_tool_duration_seconds_bucket"}
                    response = await client.get(f"{api}/query", params=query)
                    return response.json()["data"]["result"] if response.is_success else []

                async def exemplars() -> list[dict[str, Any]]:
                    now = time.time()
                    query = {
                        "query": "zeroclaw_tool_duration_seconds_bucket",
                        "start": f"{now - 600:.3f}",
                        "end": f"{now + 600:.3f}",
                    }
                    response = await client.get(f"{api}/query_exemplars", params=query)
                    if not response.is_success:
                        return []
                    return [
                        exemplar["labels"]
                        for item in response.json()["data"]
                        for exemplar in item["exemplars"]
                    ]

                found = await poll(series, what="the tool histogram", log=log, deadline=deadline)
                labels = await poll(exemplars, what="exemplars", log=log, deadline=deadline)
        finally:
            stop(process)
            server.close()
        assert "zeroclaw" == found[0]["metric"]["job"]
        expected_traces = {spans.trace_id(turn_id) for turn_id in turn_ids}
        assert set() != {e["trace_id"] for e in labels} & expected_traces
        assert set() == {e["trace_id"] for e in labels} - expected_traces
