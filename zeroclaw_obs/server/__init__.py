"""Server mode: `zeroclaw-obs serve`, an agent as a long-lived HTTP service (`docs/server.md`).

- `command.py`: the CLI command: validate, set up telemetry, run uvicorn, own the signals and
  the drain.
- `runtime.py`: conversations and turns (no HTTP).
- `streams.py`: a turn's events as clients read them, and the operator feed.
- `approvals.py`: the `web` approval surface: pending approvals and their decisions.
- `app.py`: the Starlette application: routes, auth, limits, one-line JSON errors, SSE.
- `page.html`: the operator page (static, no data; reads the operator stream).

Nothing here is imported by `run` or `demo`: `command.py` imports the rest (and Starlette,
uvicorn) only when `serve` runs.
"""

__all__: list[str] = []
