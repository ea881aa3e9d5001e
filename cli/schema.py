"""The JSON documents' schemas (JSON Schema subset), and a small validator for tests.

Versioned by the `schema` field: a change that removes or retypes a field bumps the
number; adding a field does not. Documented in docs/json-schema.md.
"""

from __future__ import annotations

from typing import Any

_NULLABLE_INT = {"type": ["integer", "null"]}
_SHAPE = {"type": "array", "items": {"type": "integer"}}

RUN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["schema", "file", "exit_code", "output", "error", "backward_calls", "tensors"],
    "properties": {
        "schema": {"enum": ["autodiff.run/1"]},
        "file": {"type": "string"},
        "exit_code": {"type": "integer"},
        "output": {"type": "string"},
        "error": {"type": ["object", "null"], "required": ["class", "message", "line", "col"],
                  "properties": {"class": {"type": "string"}, "message": {"type": "string"},
                                 "line": {"type": "integer"}, "col": {"type": "integer"}}},
        "backward_calls": {"type": "integer"},
        "tensors": {"type": "array", "items": {
            "type": "object",
            "required": ["name", "line", "shape", "dtype", "value", "requires_grad", "is_leaf",
                         "grad_fn", "chain", "grad", "grad_none_reason"],
            "properties": {
                "name": {"type": "string"}, "line": _NULLABLE_INT, "shape": _SHAPE,
                "dtype": {"type": "string"}, "value": {"type": "string"},
                "requires_grad": {"type": "boolean"}, "is_leaf": {"type": "boolean"},
                "grad_fn": {"type": ["string", "null"]}, "chain": {"type": ["string", "null"]},
                "grad": {"type": ["string", "null"]},
                "grad_none_reason": {"type": ["string", "null"]}}}},
    },
}

GRAPH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["schema", "file", "root", "nodes"],
    "properties": {
        "schema": {"enum": ["autodiff.graph/1"]},
        "file": {"type": "string"},
        "root": {"type": "string"},
        "nodes": {"type": "array", "items": {
            "type": "object",
            "required": ["id", "op", "name", "line", "shape", "dtype", "leaf", "inputs"],
            "properties": {
                "id": {"type": "string"}, "op": {"type": "string"},
                "name": {"type": ["string", "null"]}, "line": _NULLABLE_INT,
                "shape": {"type": ["array", "null"], "items": {"type": "integer"}},
                "dtype": {"type": ["string", "null"]}, "leaf": {"type": "boolean"},
                "inputs": {"type": "array", "items": {"type": "string"}}}}},
    },
}

_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def validate(value: Any, schema: dict[str, Any], where: str = "$") -> list[str]:
    """Problems found (empty when valid): type, enum, required, properties, items."""
    problems: list[str] = []
    types = schema.get("type")
    if types is not None:
        allowed = [types] if isinstance(types, str) else types
        if not any(_is(value, t) for t in allowed):
            return [f"{where}: expected {' or '.join(allowed)}, got {type(value).__name__}"]
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{where}: {value!r} not in {schema['enum']}")
    if isinstance(value, dict):
        problems += [f"{where}: missing {key}" for key in schema.get("required", ())
                     if key not in value]
        for key, sub in schema.get("properties", {}).items():
            if key in value:
                problems += validate(value[key], sub, f"{where}.{key}")
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            problems += validate(item, schema["items"], f"{where}[{i}]")
    return problems


def _is(value: Any, kind: str) -> bool:
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, _TYPES[kind])


def dump_json(document: dict) -> str:
    """A document as indented UTF-8 JSON text. A lone surrogate (in an error message, a file
    name) cannot be UTF-8: it is written as the JSON escape `\\udXXX` that stands for it."""
    import json

    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    return text.encode("utf-8", "backslashreplace").decode("utf-8")
