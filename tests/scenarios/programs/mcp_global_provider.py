"""Run one turn with a real MCP server under a GLOBAL tracer provider; print the span roots.

A program of its own because it installs a process-global provider (the `mcp` SDK starts
its spans through it), which the test process must never do.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from tests.conftest import make_replay  # noqa: E402
from zeroclaw_obs.observability.traces.tracing import SpanObserver  # noqa: E402

TOOLBOX = ROOT / "tests" / "tools" / "mcp_servers" / "toolbox.py"


def main() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    spans = SpanObserver(provider)
    data = {
        "user": "go",
        "mcp_servers": [{"name": "box", "command": sys.executable, "args": [str(TOOLBOX)]}],
        "config": {"approval": {"auto_approve": ["box__pid"]}},
        "responses": [
            {"tool_calls": [{"id": "c1", "name": "box__pid", "arguments": {}}]},
            {"text": "done"},
        ],
    }
    asyncio.run(make_replay(data, observer=spans).run())
    spans.shutdown()
    finished = exporter.get_finished_spans()
    print(
        json.dumps(
            {
                "names": sorted({s.name for s in finished}),
                "roots": [s.name for s in finished if s.parent is None],
                "traces": len({s.context.trace_id for s in finished}),
            }
        )
    )


if __name__ == "__main__":
    main()
