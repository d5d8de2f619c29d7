"""The model-switch callback an agent file gives: the models a turn may switch to, as providers.

An agent file lists, under `provider.models`, the other models of its backend a model switch
may name (`turn/model_switch.py`): the same kind, base URL, key, protocol and settings; only
the model differs. The model the file names (`provider.model`) is always one of them, so a
turn can switch back. A request naming another provider (by `provider.name`) or an unlisted
model is refused (`unknown provider` / `unknown model`): the requester is told, the turn
goes on where it is.

How each model becomes a provider:
- **scripted**: a view of the turn's own script under the other model's name
  (`ScriptedModel`): the responses go on in order whatever the model, so a scenario scripts
  the whole turn, and every `chat` span names the model it asked.
- **real** (`openai`, `anthropic`): a provider built once per model, on first use, by the
  same `build_provider` as the file's own, and kept for the life of the `ModelTargets`
  (the server's process, one `run`); `aclose` closes what was built.

Risky part: the callback may be called from a sync tool's worker thread; the cache of built
providers is guarded by a lock (building one reads the key from the environment and opens no
connection).
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable

from ._scenario_real import ScenarioProvider
from .providers.base import Provider, ProviderRequest, ProviderResponse
from .providers.scripted import ScriptedProvider
from .turn.model_switch import ModelSwitch, ModelSwitchRefused

__all__ = ["ModelTargets", "ScriptedModel"]


class ScriptedModel(Provider):
    """A scripted provider's responses, asked under another model's name.

    Shares the script (and its position) with the `ScriptedProvider` it views; the responses
    report this model unless the script names one.
    """

    def __init__(self, script: ScriptedProvider, model: str) -> None:
        self.script = script
        """The scripted provider that answers."""
        self.name = script.name
        self.model = model
        self.native_tools = script.native_tools
        self.max_retries = script.max_retries

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        """The script's next response, under this model's name.

        Raises:
            ScenarioExhaustedError: as the script does.
            ProviderError: a scripted provider failure.
        """
        response = await self.script.complete(request)
        if response.model == self.script.model:
            response = dataclasses.replace(response, model=self.model)
        return response


class ModelTargets:
    """The `switch_model` callback of one agent file (see the module docstring).

    Args:
        settings: the file's `provider` section.
        build: builds a real provider from settings (`replay.build_provider`).
        wrap: applied to each provider built here (the recorder's, with `--record`).
    """

    def __init__(
        self,
        settings: ScenarioProvider,
        *,
        build: Callable[[ScenarioProvider], Provider],
        wrap: Callable[[Provider], Provider] | None = None,
    ) -> None:
        self._settings = settings
        self._models = frozenset((settings.model or "", *settings.models))
        self._build = build
        self._wrap = wrap
        self._built: dict[str, Provider] = {}
        self._lock = threading.Lock()
        self.primary: Provider | None = None
        """The provider the agent starts on (the file's own model): a switch back to that
        model returns it. Set by whoever built it."""

    def __call__(self, request: ModelSwitch, current: Provider) -> Provider:
        """The provider serving `request` (`ModelSwitchCallback`).

        Raises:
            ModelSwitchRefused: another provider than the file's, or a model it does not list.
        """
        settings = self._settings
        if request.provider is not None and request.provider != settings.name:
            raise ModelSwitchRefused("unknown provider")
        if request.model not in self._models:
            raise ModelSwitchRefused("unknown model")
        if not settings.real:
            return self._scripted(request.model, current)
        if request.model == settings.model and self.primary is not None:
            return self.primary
        with self._lock:
            provider = self._built.get(request.model)
            if provider is None:
                provider = self._build(settings.model_copy(update={"model": request.model}))
                if self._wrap is not None:
                    provider = self._wrap(provider)
                self._built[request.model] = provider
        return provider

    def _scripted(self, model: str, current: Provider) -> Provider:
        script = current.script if isinstance(current, ScriptedModel) else current
        if not isinstance(script, ScriptedProvider):
            raise ModelSwitchRefused("the provider in use is not this agent's")
        return script if model == script.model else ScriptedModel(script, model)

    async def aclose(self) -> None:
        """Close every provider built here (not `primary`: its owner closes it)."""
        with self._lock:
            built, self._built = list(self._built.values()), {}
        for provider in built:
            await provider.aclose()
