"""Real receivers and servers the tests start: OTLP over HTTP and gRPC, a Prometheus server."""

from __future__ import annotations

import asyncio
import subprocess
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent import futures
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from .system import system_binary


class HttpReceiver:
    """An OTLP/HTTP receiver on 127.0.0.1: POST /v1/traces with a protobuf body."""

    def __init__(self, status: int = 200) -> None:
        self.requests: list[bytes] = []
        received = self.requests

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if self.path != "/v1/traces" or status != 200:
                    self.send_response(404 if self.path != "/v1/traces" else status)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                received.append(body)
                reply = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class GrpcReceiver(trace_service_pb2_grpc.TraceServiceServicer):
    """An OTLP/gRPC receiver on 127.0.0.1 implementing `TraceService/Export`."""

    def __init__(self) -> None:
        self.requests: list[bytes] = []
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(self, self.server)
        port = self.server.add_insecure_port("127.0.0.1:0")
        self.endpoint = f"http://127.0.0.1:{port}"
        self.server.start()

    def Export(self, request, context):
        self.requests.append(request.SerializeToString())
        return trace_service_pb2.ExportTraceServiceResponse()

    def close(self) -> None:
        self.server.stop(0)


def decode(requests: list[bytes]) -> list[dict]:
    spans = []
    for raw in requests:
        request = ExportTraceServiceRequest.FromString(raw)
        for resource_spans in request.resource_spans:
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    spans.append(
                        {
                            "name": span.name,
                            "trace_id": span.trace_id.hex(),
                            "span_id": span.span_id.hex(),
                            "parent": span.parent_span_id.hex() or None,
                            "start": span.start_time_unix_nano,
                            "end": span.end_time_unix_nano,
                            "attributes": {
                                a.key: getattr(a.value, a.value.WhichOneof("value"))
                                for a in span.attributes
                            },
                        }
                    )
    return spans


DEADLINE_S = 60.0


CONFIG = """\
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: zeroclaw
    static_configs:
      - targets: ["127.0.0.1:{metrics_port}"]
"""


async def poll(
    check: Callable[[], Awaitable[Any]], *, what: str, log: Path, deadline: float
) -> Any:
    """Call `check` until it returns something truthy, or fail once `deadline` has passed."""
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = await check()
        except httpx.TransportError as exc:
            last = exc
        else:
            if last:
                return last
        await asyncio.sleep(0.25)
    pytest.fail(f"timed out waiting for {what}; last: {last!r}\n{log.read_text()[-3000:]}")


def start_prometheus(tmp_path: Path, metrics_port: int, web_port: int) -> subprocess.Popen:
    config = tmp_path / "prometheus.yml"
    config.write_text(CONFIG.format(metrics_port=metrics_port))
    log = (tmp_path / "prometheus.log").open("w")
    args = [
        system_binary("prometheus"),
        f"--config.file={config}",
        f"--storage.tsdb.path={tmp_path / 'data'}",
        f"--web.listen-address=127.0.0.1:{web_port}",
        "--enable-feature=exemplar-storage",
    ]
    return subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
