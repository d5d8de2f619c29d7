"""Providers: the seam to model backends (`Provider`) and the scenario-replaying provider."""

from .base import NativeToolCall, Provider, ProviderRequest, ProviderResponse, Usage
from .scripted import ScriptedProvider

__all__ = [
    "NativeToolCall",
    "Provider",
    "ProviderRequest",
    "ProviderResponse",
    "ScriptedProvider",
    "Usage",
]
