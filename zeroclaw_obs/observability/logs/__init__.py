"""Logs: the structlog chain that redacts every line, and the observer that writes one line per
lifecycle fact (`logs.py`)."""

__all__: list[str] = []
