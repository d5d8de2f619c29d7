"""Metrics: the Prometheus observer and exposition, and its `/metrics` server (`metrics.py`)."""

__all__: list[str] = []
