"""Provider fixtures: a real loopback HTTP server per test (`wire.WireServer`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .wire import WireServer


@pytest.fixture
def wire() -> Iterator[WireServer]:
    """A started `WireServer`, stopped after the test; script it with `wire.script(...)`."""
    server = WireServer()
    server.start()
    yield server
    server.stop()
