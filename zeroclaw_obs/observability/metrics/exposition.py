"""The `/metrics` exposition of a registry: `render_metrics` (the text format or OpenMetrics)
and `serve_metrics` (an HTTP endpoint on a daemon thread)."""

from __future__ import annotations

import socket
import threading
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import CollectorRegistry, make_wsgi_app
from prometheus_client import generate_latest as _generate_text
from prometheus_client.exposition import ThreadingWSGIServer
from prometheus_client.openmetrics.exposition import generate_latest as _generate_openmetrics

__all__ = ["MetricsServer", "render_metrics", "serve_metrics"]

_POLL_INTERVAL = 0.05  # seconds `MetricsServer.close` may wait for the serving thread


def render_metrics(registry: CollectorRegistry, *, openmetrics: bool) -> bytes:
    """The registry's exposition: OpenMetrics (with exemplars) or the classic text format.

    The text format (`text/plain; version=0.0.4`) cannot carry exemplars; choose OpenMetrics
    for a scraper that stores them.
    """
    if openmetrics:
        return _generate_openmetrics(registry)
    return _generate_text(registry)


class MetricsServer:
    """A `/metrics` endpoint on a daemon thread, serving one registry until `close`.

    The endpoint negotiates the format from the `Accept` header (prometheus_client's
    `choose_encoder`): `application/openmetrics-text` gets OpenMetrics with exemplars, anything
    else the classic text format. It answers every path, `/metrics` included.
    """

    def __init__(self, httpd: WSGIServer, thread: threading.Thread) -> None:
        self._httpd = httpd
        self._thread = thread

    @property
    def host(self) -> str:
        """The address the server is bound to."""
        return str(self._httpd.server_address[0])

    @property
    def port(self) -> int:
        """The bound port (the real one when 0 was asked for)."""
        return int(self._httpd.server_port)

    @property
    def url(self) -> str:
        """`http://host:port/metrics` (an IPv6 host in brackets)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/metrics"

    def close(self, timeout: float = 5.0) -> None:
        """Stop serving, release the socket and wait up to `timeout` s for the thread."""
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout)

    def __enter__(self) -> MetricsServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """Log nothing: a scrape every few seconds must not fill stderr."""


def serve_metrics(
    registry: CollectorRegistry, host: str = "127.0.0.1", port: int = 0
) -> MetricsServer:
    """Serve `registry` over HTTP on a background thread for as long as the process runs.

    The WSGI app is prometheus_client's `make_wsgi_app`, which negotiates the format (see
    `MetricsServer`); the server around it is ours only so that `close` returns within
    `_POLL_INTERVAL` instead of `serve_forever`'s default half second.

    Args:
        registry: the runtime's registry (never the global default).
        host: the address to bind (IPv4 or IPv6); loopback unless the scraper is elsewhere.
        port: the port; 0 picks a free one (read it from `MetricsServer.port`).

    Returns:
        The running server; call `close()` to stop it.

    Raises:
        OSError: the address cannot be resolved or bound.
    """
    family, *_, sockaddr = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]

    class _Server(ThreadingWSGIServer):
        address_family = family

    httpd = make_server(
        str(sockaddr[0]), port, make_wsgi_app(registry), _Server, handler_class=_QuietHandler
    )
    thread = threading.Thread(
        target=httpd.serve_forever,
        kwargs={"poll_interval": _POLL_INTERVAL},
        name=f"zeroclaw-metrics:{httpd.server_port}",
        daemon=True,
    )
    thread.start()
    return MetricsServer(httpd, thread)
