"""Bad input, said in one line: the bounds every loaded file is held to, the shape check
that runs before validation, and the `FILE: field.path: problem` line made from a pydantic
error, which names our fields and never quotes a value or an unknown key (`config.py` and
`scenario.py` both use it)."""

from __future__ import annotations

import difflib
import re
import types
from collections.abc import Mapping
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import (
    BaseModel,
    ValidationError,
)

MAX_NESTING_DEPTH = 64
"""Most levels of nested mappings and lists a config or scenario file may hold."""


MAX_INPUT_VALUES = 100_000
"""Most values (scalars, mappings, lists) a file may hold once YAML aliases are expanded."""


MAX_COUNT = 2**63 - 1
"""Largest count a file may set (a signed 64-bit integer: what metrics and OTLP can carry)."""


class FieldProblem(ValueError):
    """Raised by a validator to report a problem below the field pydantic is validating.

    `load_error_line` appends `path` to pydantic's location and prints `problem` as is, so the
    problem text must quote no input.
    """

    def __init__(self, path: tuple[str | int, ...], problem: str) -> None:
        super().__init__(problem)
        self.path = path
        self.problem = problem


def check_input_shape(data: Any) -> str | None:
    """Check decoded file data before validation: JSON types, nesting and size.

    Walks iteratively (a recursive walk is what deep input would crash) and counts every value
    it reaches, so shared YAML aliases count once per place they are used.

    Args:
        data: what a JSON, YAML or TOML decoder returned.

    Returns:
        None when the data is fine, else the problem as `field.path: problem` (or a bare
        problem at the top level), quoting no input.
    """
    stack: list[tuple[Any, tuple[str, ...]]] = [(data, ())]
    count = 0
    while stack:
        value, path = stack.pop()
        count += 1
        if count > MAX_INPUT_VALUES:
            return f"more than {MAX_INPUT_VALUES} values (after expanding YAML aliases)"
        if len(path) > MAX_NESTING_DEPTH:
            return f"{_shown(path[:4])}: nested deeper than {MAX_NESTING_DEPTH} levels"
        if isinstance(value, dict):
            for n, (key, child) in enumerate(value.items(), 1):
                if not isinstance(key, str):
                    return f"{_shown((*path, f'<key {n}>'))}: keys must be strings"
                stack.append((child, (*path, key if key in _FIELD_NAMES else f"<key {n}>")))
        elif isinstance(value, list | tuple):
            stack.extend((child, (*path, str(i))) for i, child in enumerate(value))
        elif not isinstance(value, str | int | float | type(None)):
            return f"{_shown(path)}: {type(value).__name__} values are not allowed (JSON data only)"
    return None


def _shown(path: tuple[str, ...]) -> str:
    return ".".join(path) or "(top level)"


def scrub_parser_message(message: str) -> str:
    """A JSON/YAML/TOML parser's message with the input it quotes removed.

    Parsers quote the offending text (`found undefined alias 'ghp_…'`, `Cannot declare
    ('key',) twice`). Quoted fragments become `…`, except a short run of punctuation or an
    escape (`expected ',' or ']'`), which can carry no secret.
    """
    scrubbed = _QUOTED.sub(_keep_if_harmless, message)
    scrubbed = _TUPLE.sub("…", scrubbed)
    return " ".join(scrubbed.split())


_QUOTED = re.compile(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"")


_TUPLE = re.compile(r"\((?:…,?\s*)+\)")


_HARMLESS = re.compile(r"[^\w\s]{1,3}|\\[a-z]|\\x[0-9a-fA-F]{2}|\\u[0-9a-fA-F]{4}|<[a-z ]+>")


def _keep_if_harmless(match: re.Match[str]) -> str:
    inner = match.group(1) if match.group(1) is not None else match.group(2)
    return match.group(0) if _HARMLESS.fullmatch(inner or "") else "…"


def load_error_line(
    source: str,
    exc: ValidationError,
    data: Any = None,
    model: type[BaseModel] | None = None,
) -> str:
    """The first validation problem as one line: `source: field.path: problem`.

    Quotes no input. Field names of our models are shown; any other key (an unknown field, a
    key of a free-form mapping) is shown by its 1-based position in its mapping, `<key 2>`,
    because a key can be a payload too. The problem is pydantic's message only for error
    types whose message is built from the schema (`Input should be greater than 0`), the
    text of our own validators, or a fixed phrase naming the error type.

    Args:
        source: the file name (or `<built-in …>`), printed first.
        exc: the validation error.
        data: the input that was validated, to find keys by position; without it a key that
            is not a field name is left out of the path.
        model: the model that was validated (default `RuntimeConfig`), to tell field names
            from keys and to suggest the field an unknown key may have meant.
    """
    error = exc.errors(include_url=False)[0]
    loc = tuple(error["loc"])
    if model is None:
        from .config import RuntimeConfig  # the default root; config imports this module

        model = RuntimeConfig
    root = model
    if error["type"] == "extra_forbidden" and loc:
        parts, parent_model, parent = _walk(loc[:-1], data, root)
        where = ".".join(parts) or "(top level)"
        key = loc[-1]
        position = _position(parent, key)
        detail = f"key {position}" if position else "a key"
        if isinstance(key, str) and parent_model is not None:
            match = difflib.get_close_matches(key, list(parent_model.model_fields), 1, 0.75)
            if match:
                detail += f"; did you mean `{match[0]}`?"
        return f"{source}: {where}: unknown field ({detail})"
    cause = (error.get("ctx") or {}).get("error")
    if isinstance(cause, FieldProblem):
        loc += cause.path
    parts, _, _ = _walk(loc, data, root)
    where = ".".join(parts) or "(top level)"
    return f"{source}: {where}: {_problem(error, cause)}"


# pydantic error types whose message is built from the schema alone, never from the input.
_SCHEMA_MESSAGES = frozenset(
    {
        "missing",
        "string_type",
        "string_unicode",
        "string_too_short",
        "string_too_long",
        "bool_type",
        "bool_parsing",
        "int_type",
        "int_parsing",
        "int_parsing_size",
        "int_from_float",
        "float_type",
        "float_parsing",
        "finite_number",
        "greater_than",
        "greater_than_equal",
        "less_than",
        "less_than_equal",
        "list_type",
        "tuple_type",
        "dict_type",
        "too_short",
        "too_long",
        "model_type",
        "model_attributes_type",
        "enum",
        "literal_error",
        "none_required",
        "union_tag_not_found",
    }
)


def _problem(error: Any, cause: Any) -> str:
    if isinstance(cause, FieldProblem):
        return cause.problem
    if error["type"] in ("value_error", "assertion_error") and isinstance(cause, Exception):
        return str(cause)  # our validators' own texts, which quote no input
    if error["type"] in _SCHEMA_MESSAGES:
        return str(error["msg"])
    return f"invalid value ({error['type']})"


_MISSING: Any = object()


def _walk(
    loc: tuple[Any, ...], data: Any, model: type[BaseModel] | None
) -> tuple[list[str], type[BaseModel] | None, Any]:
    """Render `loc` safely, following the input and the models alongside it.

    Returns:
        The shown path parts, the model at the end of the path (or None) and the input there
        (or a marker when it is not known).
    """
    parts: list[str] = []
    data = _MISSING if data is None else data
    keyed = False  # `data` is a free-form mapping (`dict[str, …]`): its keys are not fields
    for part in loc:
        fields = {} if keyed else _fields(model)
        if isinstance(part, str) and part in fields:
            parts.append(part)
            keyed = _is_mapping(fields[part])
            model = _inner_model(fields[part])
            data = data.get(part, _MISSING) if isinstance(data, Mapping) else _MISSING
        elif isinstance(data, Mapping) and _has_key(data, part):
            parts.append(f"<key {_position(data, part)}>")
            # Below a key of a `dict[str, Model]` field (`bundles`) the model goes on.
            data, model = data[part], (model if keyed else None)
            keyed = False
        elif isinstance(part, int):
            parts.append(str(part))
            in_list = isinstance(data, list | tuple) and 0 <= part < len(data)
            data = data[part] if in_list else _MISSING
        # Anything else is a label pydantic adds for a union member (`literal[...]`,
        # `function-after[...]`, a class name): schema, not a place in the file; left out.
    return parts, model, data


def _has_key(mapping: Mapping[Any, Any], key: Any) -> bool:
    try:
        return key in mapping
    except TypeError:
        return False


def _position(mapping: Any, key: Any) -> int | None:
    if not isinstance(mapping, Mapping):
        return None
    for n, candidate in enumerate(mapping, 1):
        if candidate == key and type(candidate) is type(key):
            return n
    return None


def _fields(model: type[BaseModel] | None) -> dict[str, Any]:
    if model is None:
        return {}
    fields: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        fields[name] = info.annotation
        if info.alias:
            fields[info.alias] = info.annotation
    return fields


def _is_mapping(annotation: Any) -> bool:
    """Whether a field holds a mapping (`dict[str, …]`, also when optional or annotated)."""
    origin = get_origin(annotation)
    if origin is dict or origin is Mapping:
        return True
    if origin in (Union, types.UnionType, Annotated):
        return any(_is_mapping(arg) for arg in get_args(annotation))
    return False


def _inner_model(annotation: Any) -> type[BaseModel] | None:
    """The model a field holds, directly or inside a list, an optional or an annotation."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _inner_model(arg)
        if found is not None:
            return found
    return None


def _field_names(model: type[BaseModel], seen: set[type[BaseModel]]) -> set[str]:
    seen.add(model)
    names: set[str] = set()
    for name, annotation in _fields(model).items():
        names.add(name)
        inner = _inner_model(annotation)
        if inner is not None and inner not in seen:
            names |= _field_names(inner, seen)
    return names


_FIELD_NAMES: set[str] = set()
"""Every field name of the config models (the scenario models add theirs); shown in paths."""


def register_field_names(model: type[BaseModel]) -> None:
    """Add `model`'s field names (recursively) to the names `check_input_shape` may show."""
    _FIELD_NAMES.update(_field_names(model, set()))
