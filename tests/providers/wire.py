"""`WireServer`: a real HTTP/1.1 server on a free loopback port, scripted per test.

Providers are tested against real HTTP, never by patching httpx (STYLE §3, httpx's
`serve_in_thread`). A test queues canned `Reply`s; each request takes the next one, in order,
and is recorded as a `Recorded` (method, path, headers, raw and JSON body) so the test can
assert what was sent. A reply is a status, headers and either a whole body or a stream of
chunks (sent with chunked transfer encoding, one flush per chunk), with the failures a real
backend shows: a pause before answering, a pause between chunks, and a connection dropped
after N chunks. Nothing here knows a wire format beyond `sse()`, which frames OpenAI-style
(`data:` only) and Anthropic-style (`event:` + `data:`) events alike.

Risky part: threads. Each connection has its own daemon thread; every wait is on the server's
`stopping` event, so `stop()` never waits for a sleeping handler, and a handler writing to a
client that went away records the disconnect instead of raising.
"""

from __future__ import annotations

import json
import select
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["DONE", "Recorded", "Reply", "WireServer", "sse"]

DONE = b"data: [DONE]\n\n"
"""OpenAI's end-of-stream event."""


def sse(data: Any, event: str | None = None) -> bytes:
    """One Server-Sent Event: `data` as compact JSON (a str is sent as is), `event:` when given."""
    text = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    head = f"event: {event}\n" if event is not None else ""
    return f"{head}data: {text}\n\n".encode()


@dataclass
class Reply:
    """One canned answer."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    """The whole body (sent with `Content-Length`) when `chunks` is None."""

    chunks: list[bytes] | None = None
    """A streamed body: each item is written and flushed as one HTTP chunk."""

    delay_s: float = 0.0
    """Sleep this long before sending anything (the status line included)."""

    chunk_delay_s: float = 0.0
    """Sleep this long before each chunk after the first."""

    drop_after: int | None = None
    """Close the connection abruptly after this many chunks (no terminating chunk)."""

    @classmethod
    def json(cls, payload: Any, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
        """A JSON body."""
        return cls(
            status=status,
            headers={"content-type": "application/json", **(headers or {})},
            body=json.dumps(payload).encode(),
        )

    @classmethod
    def stream(cls, chunks: Iterable[bytes], **kwargs: Any) -> Reply:
        """An event stream (`text/event-stream`) of already framed chunks (see `sse`)."""
        headers = {"content-type": "text/event-stream", **kwargs.pop("headers", {})}
        return cls(headers=headers, chunks=list(chunks), **kwargs)


@dataclass
class Recorded:
    """One request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]
    """Header names lower-cased."""

    body: bytes
    client_port: int = 0
    """The client's port: two requests with the same port shared one pooled connection."""

    disconnected: threading.Event = field(default_factory=threading.Event)
    """Set when the server saw the client close the connection before the reply ended."""

    @property
    def json(self) -> Any:
        """The body decoded as JSON."""
        return json.loads(self.body)


class WireServer:
    """A threaded HTTP server on 127.0.0.1:<free port>; `start()`, script, `stop()`."""

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[Recorded] = []
        self.stopping = threading.Event()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.wire = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        """`http://127.0.0.1:<port>`."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    def script(self, *replies: Reply) -> None:
        """Queue replies, answered in order."""
        self.replies.extend(replies)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that went away (a cancelled or timed-out request) is what tests provoke.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # one small write per chunk must not wait for an ACK

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        self._answer()

    def do_POST(self) -> None:
        self._answer()

    def _answer(self) -> None:
        wire: WireServer = self.server.wire  # type: ignore[attr-defined]
        length = int(self.headers.get("content-length") or 0)
        record = Recorded(
            method=self.command,
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=self.rfile.read(length),
            client_port=self.client_address[1],
        )
        wire.requests.append(record)
        reply = (
            wire.replies.popleft()
            if wire.replies
            else Reply.json({"error": {"type": "wire_server_unscripted"}}, status=418)
        )
        try:
            self._send(wire, reply, record)
        except (BrokenPipeError, ConnectionResetError):
            record.disconnected.set()
            self.close_connection = True

    def _send(self, wire: WireServer, reply: Reply, record: Recorded) -> None:
        if reply.delay_s and not self._pause(wire, reply.delay_s, record):
            return
        self.send_response(reply.status)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        if reply.chunks is None:
            self.send_header("content-length", str(len(reply.body)))
            self.end_headers()
            self.wfile.write(reply.body)
            return
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for n, chunk in enumerate(reply.chunks):
            if reply.drop_after is not None and n >= reply.drop_after:
                self._drop()
                return
            if n and reply.chunk_delay_s and not self._pause(wire, reply.chunk_delay_s, record):
                return
            self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            self.wfile.flush()
        if reply.drop_after is not None and reply.drop_after <= len(reply.chunks):
            self._drop()
            return
        self.wfile.write(b"0\r\n\r\n")

    def _pause(self, wire: WireServer, seconds: float, record: Recorded) -> bool:
        """Wait `seconds`, watching the socket; False when the client closed or we stop."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            if wire.stopping.is_set():
                return False
            readable, _, _ = select.select([self.connection], [], [], min(left, 0.05))
            if readable and not self._peer_open():
                record.disconnected.set()
                self.close_connection = True
                return False
        return not wire.stopping.is_set()

    def _peer_open(self) -> bool:
        try:
            return bool(self.connection.recv(1, socket.MSG_PEEK))
        except OSError:
            return False

    def _drop(self) -> None:
        self.wfile.flush()
        self.close_connection = True
        self.connection.shutdown(socket.SHUT_RDWR)


def anthropic_event(event: str, **data: Any) -> bytes:
    """One event of Anthropic's Messages stream (the `type` field repeats the event name)."""
    return sse({"type": event, **data}, event)


def anthropic_text(*deltas: str) -> list[bytes]:
    """An Anthropic stream up to its text deltas: `message_start`, one text block, `deltas`."""
    start = anthropic_event(
        "message_start",
        message={
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": [],
            "stop_reason": None,
            "usage": {"input_tokens": 10, "output_tokens": 1},
        },
    )
    block = anthropic_event(
        "content_block_start", index=0, content_block={"type": "text", "text": ""}
    )
    return [
        start,
        block,
        *(
            anthropic_event("content_block_delta", index=0, delta={"type": "text_delta", "text": d})
            for d in deltas
        ),
    ]
