"""Providers: the seam to model backends (`Provider`) and the scenario-replaying provider.

The real backends, `providers.openai.OpenAIProvider` and `providers.anthropic.AnthropicProvider`,
are not re-exported here: they import httpx, and a scripted run (`demo`) must not.
`replay.build_provider` imports the one a `provider:` section names, when it builds it.
"""

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
