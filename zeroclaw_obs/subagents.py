"""The agent file's sub-agents (`agents:`), wired for the runtime (`turn/delegation.py`).

`replay.py` calls `build_subagents` when it builds an agent's execution: each sub-agent
becomes a `Subagent` with its bundles, risk profile, prompt and, when it has one, a builder
for its own provider. A sub-agent without its own `provider` or `responses` uses its parent's
provider object, so on a scripted parent it takes the next responses of the parent's script
and, under `--record`, its calls are recorded in that one script in the order they happen.

Risky part: a sub-agent's own provider is built for each delegation and closed when the
nested turn ends (a real one holds an HTTP client; a scripted one replays its script from
the first response each time, as a scripted model does for each turn in `serve`). Its key
variable is checked here, once, so a missing key is bad input before the run, not a failed
`delegate` call in the middle of it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from .providers.base import Provider
from .scenario import Scenario, ScenarioProvider, ScenarioResponse
from .turn.delegation import Subagent

__all__ = ["ProviderBuilder", "build_subagents"]

ProviderBuilder = Callable[..., Provider]
"""`replay.build_provider`: `(settings, responses, *, source, env) -> Provider`."""


def build_subagents(
    scenario: Scenario,
    *,
    build_provider: ProviderBuilder,
    check_key: Callable[..., object],
    source: str = "scenario",
    env: Mapping[str, str] | None = None,
    wrap: Callable[[Provider], Provider] | None = None,
) -> dict[str, Subagent]:
    """The sub-agents of `scenario`, by name, in file order.

    Args:
        scenario: the agent file.
        build_provider: builds a provider from a `provider:` section and responses.
        check_key: `replay.resolve_api_key`: raises when a real provider's key variable is
            not set.
        source: the file's name, for error lines (a sub-agent is named by its position).
        env: where key variables are read.
        wrap: applied to each provider a sub-agent builds (`--record` records through it).

    Raises:
        ConfigError: the key variable a sub-agent's own real provider needs is not set.
    """
    built: dict[str, Subagent] = {}
    for position, (name, spec) in enumerate(scenario.agents.items(), 1):
        provider = None
        if spec.provider is not None or spec.responses:
            settings = spec.provider or scenario.provider
            where = f"{source}: agents.<key {position}>"
            check_key(settings, source=where, env=env)
            provider = _builder(settings, spec.responses, build_provider, where, env, wrap)
        built[name] = Subagent(
            name=name,
            description=spec.description,
            system_prompt=spec.system_prompt,
            bundles=scenario.subagent_bundles(name),
            risk_profile=spec.risk_profile,
            provider=provider,
        )
    return built


def _builder(
    settings: ScenarioProvider,
    responses: Sequence[ScenarioResponse],
    build_provider: ProviderBuilder,
    source: str,
    env: Mapping[str, str] | None,
    wrap: Callable[[Provider], Provider] | None,
) -> Callable[[], Provider]:
    def build() -> Provider:
        provider = build_provider(settings, responses, source=source, env=env)
        return provider if wrap is None else wrap(provider)

    return build
