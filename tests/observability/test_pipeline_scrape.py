"""The whole pipeline against a real Prometheus: exemplars point at spans that were exported.

`setup_telemetry` is what `zeroclaw-obs run --metrics-port N --otlp-json F` builds. A real
Prometheus scrapes its `/metrics`; the exemplar trace ids it stores must be trace ids of spans
in the OTLP/JSON export of the same turns — the jump from a latency bucket to the trace works.
"""

from __future__ import annotations

import time
from typing import Any

import httpx

from zeroclaw_obs.observability.telemetry import TelemetryOptions, setup_telemetry
from zeroclaw_obs.observability.traces.otlp_json import read_otlp_json
from zeroclaw_obs.redaction import Redactor

from ..builders import mixed_turn
from ..conftest import make_replay
from ..receivers import DEADLINE_S, poll, start_prometheus
from ..system import free_port, stop, system_binary


class TestPipelineScrape:
    async def test_exemplars_are_exported_trace_ids(self, tmp_path):
        """PromQL returns the tool histogram and every stored exemplar's trace id is a trace of
        the OTLP export."""
        system_binary("prometheus")
        spans_file = tmp_path / "spans.jsonl"
        telemetry = setup_telemetry(
            TelemetryOptions(
                otlp_json=spans_file, metrics_port=0, env={"OTEL_SERVICE_NAME": "scrape-test"}
            ),
            redactor=Redactor(),
        )
        process = None
        try:
            for _ in range(2):
                await make_replay(mixed_turn(), observer=telemetry.observer).run()
            assert telemetry.tracer_provider is not None
            telemetry.tracer_provider.force_flush(5000)
            assert telemetry.metrics_server is not None
            web_port = free_port()
            process = start_prometheus(tmp_path, telemetry.metrics_server.port, web_port)
            api = f"http://127.0.0.1:{web_port}/api/v1"
            log = tmp_path / "prometheus.log"
            deadline = time.monotonic() + DEADLINE_S
            async with httpx.AsyncClient(timeout=5) as client:

                async def series() -> list[dict[str, Any]]:
                    query = {"query": "sum by (tool) (zeroclaw_tool_duration_seconds_count)"}
                    response = await client.get(f"{api}/query", params=query)
                    return response.json()["data"]["result"] if response.is_success else []

                async def exemplars() -> list[str]:
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
                        exemplar["labels"]["trace_id"]
                        for item in response.json()["data"]
                        for exemplar in item["exemplars"]
                    ]

                found = await poll(series, what="the tool histogram", log=log, deadline=deadline)
                trace_ids = await poll(exemplars, what="exemplars", log=log, deadline=deadline)
        finally:
            if process is not None:
                stop(process)
            telemetry.shutdown(timeout_s=5.0)
        assert found
        exported = {span["trace_id"] for span in read_otlp_json(spans_file)}
        assert 2 == len(exported)
        assert set() == set(trace_ids) - exported
