"""OTLP/HTTP protobuf span export with our encoder (`otlp_proto.py`).

`OtlpProtoSpanExporter` is the SDK's `OTLPSpanExporter` with only the encoding swapped:
endpoint, headers, timeout, compression, TLS, retries, the request size limit, the environment
variables and the exporter's own metrics stay the SDK's. The gRPC exporter keeps the SDK's
encoder: gRPC serialises the message itself.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult

from .otlp_proto import OtlpProtoEncoder

__all__ = ["OtlpProtoSpanExporter"]

_log = logging.getLogger(__name__)


class OtlpProtoSpanExporter(OTLPSpanExporter):
    """The SDK's OTLP/HTTP protobuf span exporter, encoding with `OtlpProtoEncoder`.

    Takes the SDK exporter's arguments and reads the same `OTEL_EXPORTER_OTLP_*` variables;
    everything but the encoding is the SDK's (its HTTP client, retries, compression, request
    size limit, exporter metrics). `export` follows the SDK's own, step for step. Should the
    SDK's internals it relies on be missing (another SDK version), it exports through the SDK's
    `export` instead, unchanged.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._encoder = OtlpProtoEncoder()
        self._ours = all(
            hasattr(self, name) for name in ("_client", "_metrics", "_max_request_size")
        )

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if not self._ours:
            return super().export(spans)
        if self._shutdown:
            _log.warning("Exporter already shutdown, ignoring batch")
            return SpanExportResult.FAILURE
        with self._metrics.export_operation(len(spans)) as result:
            try:
                data = self._encoder.encode(spans)
            except Exception as error:
                # The type only (the SDK logs the message, which can quote a value).
                _log.error("Failed to encode span batch: %s", type(error).__name__)
                result.error = error
                return SpanExportResult.FAILURE
            if 0 < self._max_request_size < len(data):
                _log.warning(
                    "Dropping span batch: serialized size %d bytes exceeds max_request_size "
                    "%d bytes.",
                    len(data),
                    self._max_request_size,
                )
                result.error = _request_too_large(len(data), self._max_request_size)
                return SpanExportResult.FAILURE
            exported = self._client.export(data)
            if not exported.success:
                result.error = exported.error
                result.error_attrs = (
                    {"http.response.status_code": exported.status_code}
                    if exported.status_code is not None
                    else None
                )
                return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS


def _request_too_large(size: int, limit: int) -> Exception:
    from opentelemetry.exporter.otlp.proto.http._common import RequestPayloadTooLargeError

    return RequestPayloadTooLargeError(
        f"Serialized span request size {size} bytes exceeds max_request_size {limit} bytes."
    )
