"""Traces: the span observer (`tracing.py`) and what stands behind it: deferred spans built
on a worker (`deferred_spans.py`), the open spans of each turn (`open_spans.py`), the export
guard (`export_guard.py`), the OTLP/JSON file exporter (`otlp_json.py`) and the provider set-up
from the `OTEL_*` variables (`tracer_setup.py`)."""

__all__: list[str] = []
