"""A Python tool that switches its turn's model, for the server tests' agent files."""

from __future__ import annotations

from zeroclaw_obs.tools.base import tool
from zeroclaw_obs.turn.model_switch import request_model_switch

__all__ = ["use_model"]


@tool
async def use_model(model: str) -> str:
    """Continue this turn on another model of the agent's provider."""
    request_model_switch(model)
    return "switching"
