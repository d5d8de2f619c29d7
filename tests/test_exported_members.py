"""Every module's `__all__` matches what it defines (STYLE §1)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import zeroclaw_obs

MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(zeroclaw_obs.__path__, prefix="zeroclaw_obs.")
    if not m.name.rsplit(".", 1)[-1].startswith("_")
)


@pytest.mark.parametrize("name", MODULES)
def test_all_names_exist(name: str):
    """Each name listed in `__all__` exists in its module."""
    module = importlib.import_module(name)
    assert hasattr(module, "__all__"), f"{name} has no __all__"
    missing = [n for n in module.__all__ if not hasattr(module, n)]
    assert [] == missing


@pytest.mark.parametrize("name", MODULES)
def test_public_definitions_are_exported(name: str):
    """Each public class or function a module defines is listed in its `__all__`."""
    module = importlib.import_module(name)
    defined = {
        attr
        for attr, value in vars(module).items()
        if not attr.startswith("_")
        and (inspect.isclass(value) or inspect.isfunction(value))
        and getattr(value, "__module__", None) == name
    }
    assert set() == defined - set(module.__all__)
