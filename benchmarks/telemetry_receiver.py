"""An OTLP/HTTP protobuf receiver on loopback, in its own process, for `telemetry.py`.

It accepts `POST /v1/traces`, `/v1/logs` and `/v1/metrics` with a protobuf body, answers an
empty export response (200, `application/x-protobuf`) over keep-alive connections, and keeps
every body so a check can decode what arrived. It runs in a child process so that its own CPU
(parsing requests, holding bodies) is never charged to the process being measured: the figures
count what the exporting side spends, as a collector on another host would leave it.

Control, over the same port: `GET /stats` (JSON: requests and bytes by path), `GET /bodies`
(every trace body kept, each as a 4-byte big-endian length then the body), `POST /reset`.

    python benchmarks/telemetry_receiver.py    # prints "PORT <n>" once it listens
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["OtlpReceiver"]

_PATHS = ("/v1/traces", "/v1/logs", "/v1/metrics")
_EMPTY_RESPONSE = b""
"""`Export*ServiceResponse` with no partial success: its protobuf encoding is empty."""


class OtlpReceiver:
    """Starts the receiver process and talks to it; `endpoint` is its base URL.

    Use as a context manager, or call `close`.
    """

    def __init__(self) -> None:
        self._process = subprocess.Popen(
            [sys.executable, __file__],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._process.stdout is not None
        line = self._process.stdout.readline()
        if not line.startswith("PORT "):
            self._process.kill()
            raise RuntimeError(f"the OTLP receiver did not start: {line!r}")
        self.endpoint = f"http://127.0.0.1:{int(line.split()[1])}"
        self.traces_endpoint = self.endpoint + "/v1/traces"

    def stats(self) -> dict[str, dict[str, int]]:
        """{path: {"requests": n, "bytes": n}} since the last `reset`."""
        with urllib.request.urlopen(self.endpoint + "/stats", timeout=10) as reply:
            return json.loads(reply.read())

    def bodies(self) -> list[bytes]:
        """Every `/v1/traces` body received since the last `reset`, in order."""
        with urllib.request.urlopen(self.endpoint + "/bodies", timeout=30) as reply:
            data = reply.read()
        out, at = [], 0
        while at < len(data):
            size = int.from_bytes(data[at : at + 4], "big")
            out.append(data[at + 4 : at + 4 + size])
            at += 4 + size
        return out

    def reset(self) -> None:
        request = urllib.request.Request(self.endpoint + "/reset", data=b"", method="POST")
        with urllib.request.urlopen(request, timeout=10):
            pass

    def close(self) -> None:
        self._process.kill()
        self._process.wait(10)

    def __enter__(self) -> OtlpReceiver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def serve() -> None:
    """The child process: serve until killed."""
    lock = threading.Lock()
    counts: dict[str, dict[str, int]] = {p: {"requests": 0, "bytes": 0} for p in _PATHS}
    bodies: list[bytes] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as a collector serves exporters

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.path == "/reset":
                with lock:
                    bodies.clear()
                    for entry in counts.values():
                        entry["requests"] = entry["bytes"] = 0
                self._reply(200, b"", "text/plain")
                return
            if self.path not in counts:
                self._reply(404, b"", "text/plain")
                return
            with lock:
                counts[self.path]["requests"] += 1
                counts[self.path]["bytes"] += len(body)
                if self.path == "/v1/traces":
                    bodies.append(body)
            self._reply(200, _EMPTY_RESPONSE, "application/x-protobuf")

        def do_GET(self) -> None:
            with lock:
                if self.path == "/stats":
                    payload = json.dumps(counts).encode()
                elif self.path == "/bodies":
                    payload = b"".join(len(b).to_bytes(4, "big") + b for b in bodies)
                else:
                    payload = b""
            self._reply(200 if payload else 404, payload, "application/octet-stream")

        def _reply(self, status: int, payload: bytes, kind: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    serve()
