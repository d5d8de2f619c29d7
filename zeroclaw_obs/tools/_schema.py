"""A small, fast JSON-schema validator for tool arguments.

We validate every call before dispatch, so this sits on the per-call hot path. The full
`jsonschema` package costs tens of microseconds per call and brings dependencies; tool schemas
in practice use a small subset. This validator compiles that subset once per tool:
`type` (string, integer, number, boolean, object, array, null, or a list of them), `properties`,
`required`, `additionalProperties` (bool), `enum`, `const`, `items`, `minLength`, `maxLength`,
`minimum`, `maximum`, `minItems`, `maxItems` and `anyOf`. Unknown keywords are ignored
(permissive), which is what providers do with schemas they do not understand either.

Two validators, one verdict: the subset is also compiled to a `pydantic_core` schema
(`_core_schema`), which answers a valid call in well under a microsecond; only when it says
no (or could not compile the schema exactly) does the hand-written one run, so every error
message is the hand-written one's and its verdict is final. The compiled schema is built to
accept nothing the hand-written validator refuses (strict types, constraints bound to the
type they apply to); a construct it cannot express exactly (an `enum` that is not all
strings, `anyOf` beside other keywords, a bound of the wrong type) is not compiled, and that
tool keeps the hand-written path. `tests/tools/test_schema.py` checks the implication with
generated schemas and values.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic_core import CoreSchema, SchemaError, ValidationError, core_schema
from pydantic_core import SchemaValidator as _CoreValidator

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
        schema = schema if isinstance(schema, dict) else {}
        self._check = _compile(schema)
        self._fast = _core_validator(schema)

    @property
    def compiled(self) -> bool:
        """Whether valid values take the `pydantic_core` path (False: hand-written only)."""
        return self._fast is not None

    def first_error(self, value: Any) -> str | None:
        """The first violation as `path: problem`, or None when the value is valid."""
        if self._fast is not None:
            try:
                self._fast.validate_python(value)
            except ValidationError:
                pass  # the hand-written validator says why (its verdict is final)
            else:
                return None
        return self._check(value, "")


_KEYWORDS = frozenset(
    {
        "type", "properties", "required", "additionalProperties", "enum", "const", "items",
        "minLength", "maxLength", "minimum", "maximum", "minItems", "maxItems", "anyOf",
    }
)  # fmt: skip
"""The keywords both validators read; any other is ignored by both."""


class _NotExact(Exception):
    """The schema has a construct the compiled form cannot express exactly."""


def _core_validator(schema: dict[str, Any]) -> _CoreValidator | None:
    try:
        return _CoreValidator(_core_schema(schema))
    except (_NotExact, SchemaError, TypeError, ValueError, RecursionError):
        return None


def _core_schema(schema: Any) -> CoreSchema:
    """The compiled form of one (sub)schema; raises `_NotExact` when it cannot be exact."""
    if not isinstance(schema, dict):
        return core_schema.any_schema()
    keys = _KEYWORDS & set(schema)
    if "anyOf" in keys:
        options = schema["anyOf"]
        if keys != {"anyOf"} or not isinstance(options, list):
            raise _NotExact
        subs = [_core_schema(o) for o in options if isinstance(o, dict)]
        if not subs:
            raise _NotExact  # an empty anyOf refuses everything: the hand-written path says so
        return core_schema.union_schema(subs, mode="smart")
    if "enum" in keys or "const" in keys:
        values = [schema["const"]] if "const" in keys else schema["enum"]
        only_strings = isinstance(values, list) and all(isinstance(v, str) for v in values)
        if (
            keys - {"enum", "const", "type"}
            or {"enum", "const"} <= keys
            or not only_strings
            or schema.get("type", "string") != "string"
        ):
            raise _NotExact
        return core_schema.literal_schema(list(values))
    declared = schema.get("type")
    names = [declared] if isinstance(declared, str) else declared
    if names is not None and not isinstance(names, list):
        raise _NotExact
    known = [n for n in (names or []) if n in _TYPES]
    choices = [_typed(name, schema) for name in (known or list(_TYPES))]
    return choices[0] if len(choices) == 1 else core_schema.union_schema(choices, mode="smart")


def _typed(name: str, schema: dict[str, Any]) -> CoreSchema:
    """One JSON type with the keywords that apply to it (the others ignore it, as the
    hand-written checks do)."""
    if name == "string":
        return core_schema.str_schema(
            strict=True,
            min_length=_count(schema, "minLength"),
            max_length=_count(schema, "maxLength"),
        )
    if name in ("integer", "number"):
        ge, le = _bound(schema, "minimum"), _bound(schema, "maximum")
        if name == "integer":
            if any(b is not None and not isinstance(b, int) for b in (ge, le)):
                raise _NotExact
            return core_schema.int_schema(strict=True, ge=ge, le=le)
        return core_schema.float_schema(strict=True, ge=ge, le=le)
    if name == "boolean":
        return core_schema.bool_schema(strict=True)
    if name == "null":
        return core_schema.none_schema()
    if name == "array":
        items = schema.get("items")
        return core_schema.list_schema(
            _core_schema(items) if isinstance(items, dict) else core_schema.any_schema(),
            strict=True,
            min_length=_count(schema, "minItems"),
            max_length=_count(schema, "maxItems"),
        )
    return _object(schema)


def _object(schema: dict[str, Any]) -> CoreSchema:
    properties = schema.get("properties") or {}
    required = schema.get("required") or []
    if not isinstance(properties, dict) or not isinstance(required, list):
        raise _NotExact
    wanted = {r for r in required if isinstance(r, str)}
    fields = {
        name: core_schema.typed_dict_field(_core_schema(sub), required=name in wanted)
        for name, sub in properties.items()
        if isinstance(sub, dict)
    }
    if any(not isinstance(sub, dict) for sub in properties.values()):
        raise _NotExact  # the hand-written check ignores such a property, even when closed
    closed = schema.get("additionalProperties") is False
    if closed and wanted - fields.keys():
        raise _NotExact  # required yet not a property of a closed object: never valid
    for name in wanted - fields.keys():
        fields[name] = core_schema.typed_dict_field(core_schema.any_schema(), required=True)
    return core_schema.typed_dict_schema(
        fields, extra_behavior="forbid" if closed else "allow", strict=True
    )


def _count(schema: dict[str, Any], key: str) -> int | None:
    value = schema.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise _NotExact
    return value


def _bound(schema: dict[str, Any], key: str) -> int | float | None:
    value = schema.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _NotExact
    return value


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
