"""A small, fast JSON-schema validator for tool arguments.

We validate every call before dispatch, so this sits on the per-call hot path. The full
`jsonschema` package costs tens of microseconds per call and brings dependencies; tool schemas
in practice use a small subset. This validator compiles that subset once per tool:
`type` (string, integer, number, boolean, object, array, null, or a list of them), `properties`,
`required`, `additionalProperties` (bool), `enum`, `const`, `items`, `minLength`, `maxLength`,
`minimum`, `maximum`, `minItems`, `maxItems` and `anyOf`. Unknown keywords are ignored
(permissive), which is what providers do with schemas they do not understand either.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["SchemaValidator"]

Check = Callable[[Any, str], str | None]

_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "null": lambda v: v is None,
}


class SchemaValidator:
    """Validates a value against a compiled schema; `first_error` returns a readable message."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self._check = _compile(schema if isinstance(schema, dict) else {})

    def first_error(self, value: Any) -> str | None:
        """The first violation as `path: problem`, or None when the value is valid."""
        return self._check(value, "")


def _where(path: str) -> str:
    return path or "arguments"


def _compile(schema: dict[str, Any]) -> Check:
    checks: list[Check] = []
    if "type" in schema:
        checks.append(_type_check(schema["type"]))
    if "enum" in schema:
        allowed = list(schema["enum"])
        checks.append(
            lambda v, p: None if v in allowed else f"{_where(p)}: must be one of {allowed}"
        )
    if "const" in schema:
        const = schema["const"]
        checks.append(lambda v, p: None if v == const else f"{_where(p)}: must be {const!r}")
    checks.extend(_bound_checks(schema))
    if "properties" in schema or "required" in schema or "additionalProperties" in schema:
        checks.append(_object_check(schema))
    if isinstance(schema.get("items"), dict):
        item = _compile(schema["items"])

        def check_items(v: Any, p: str) -> str | None:
            if not isinstance(v, list):
                return None
            for i, element in enumerate(v):
                problem = item(element, f"{p}[{i}]")
                if problem:
                    return problem
            return None

        checks.append(check_items)
    if isinstance(schema.get("anyOf"), list):
        options = [_compile(s) for s in schema["anyOf"] if isinstance(s, dict)]
        checks.append(
            lambda v, p: (
                None
                if any(o(v, p) is None for o in options)
                else f"{_where(p)}: matches none of the allowed forms"
            )
        )

    def check(value: Any, path: str) -> str | None:
        for one in checks:
            problem = one(value, path)
            if problem:
                return problem
        return None

    return check


def _type_check(declared: str | list[str]) -> Check:
    names = [declared] if isinstance(declared, str) else list(declared)
    tests = [_TYPES[n] for n in names if n in _TYPES]
    label = " or ".join(names)

    def check(v: Any, p: str) -> str | None:
        if not tests or any(t(v) for t in tests):
            return None
        return f"{_where(p)}: expected {label}, got {_json_type(v)}"

    return check


def _bound_checks(schema: dict[str, Any]) -> list[Check]:
    checks: list[Check] = []
    for key, kind, cmp, text in (
        ("minLength", str, lambda n, b: n >= b, "at least {} characters"),
        ("maxLength", str, lambda n, b: n <= b, "at most {} characters"),
        ("minItems", list, lambda n, b: n >= b, "at least {} items"),
        ("maxItems", list, lambda n, b: n <= b, "at most {} items"),
    ):
        if key in schema:
            bound = schema[key]
            checks.append(
                lambda v, p, kind=kind, cmp=cmp, text=text, bound=bound: (
                    None
                    if not isinstance(v, kind) or cmp(len(v), bound)
                    else f"{_where(p)}: must have " + text.format(bound)
                )
            )
    for key, cmp, text in (
        ("minimum", lambda n, b: n >= b, ">="),
        ("maximum", lambda n, b: n <= b, "<="),
    ):
        if key in schema:
            bound = schema[key]
            checks.append(
                lambda v, p, cmp=cmp, text=text, bound=bound: (
                    None
                    if not _TYPES["number"](v) or cmp(v, bound)
                    else f"{_where(p)}: must be {text} {bound}"
                )
            )
    return checks


def _object_check(schema: dict[str, Any]) -> Check:
    properties = {
        name: _compile(sub)
        for name, sub in (schema.get("properties") or {}).items()
        if isinstance(sub, dict)
    }
    required = [r for r in schema.get("required") or [] if isinstance(r, str)]
    closed = schema.get("additionalProperties") is False

    def check(v: Any, p: str) -> str | None:
        if not isinstance(v, dict):
            return None
        for name in required:
            if name not in v:
                return f"{_join(p, name)}: required property is missing"
        for name, value in v.items():
            sub = properties.get(name)
            if sub is not None:
                problem = sub(value, _join(p, name))
                if problem:
                    return problem
            elif closed:
                return f"{_join(p, name)}: unexpected property"
        return None

    return check


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _json_type(v: Any) -> str:
    for name in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if _TYPES[name](v):
            return name
    return type(v).__name__
