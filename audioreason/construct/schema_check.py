"""Checking a reply against a stage's JSON Schema, in the subset OpenAI's strict structured outputs accept:
``type`` (object, array, string, integer, number, boolean, null, or a list of them), ``properties`` with
``required`` and ``additionalProperties: false``, ``items``, ``minItems``/``maxItems``, ``enum``,
``minLength``/``maxLength``, ``minimum``/``maximum``, ``anyOf``. A reply from a server that ignores
``response_format`` (or one without structured outputs) is held to the same schema here, so every stage reads
replies of one shape. Anything else in a schema is refused when the schema is checked (``check_schema``), never
ignored.
"""

from __future__ import annotations

from typing import Any, Mapping

_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}
_KEYS = {
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "minItems",
    "maxItems",
    "enum",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "anyOf",
    "description",
}


def check_json(value: Any, schema: Mapping[str, Any], path: str = "reply") -> None:
    """ValueError naming the first place where ``value`` does not fit ``schema``."""
    if "anyOf" in schema:
        errors = []
        for branch in schema["anyOf"]:
            try:
                check_json(value, branch, path)
                return
            except ValueError as err:
                errors.append(str(err))
        raise ValueError(f"{path} fits none of the allowed forms ({'; '.join(errors)})")
    kinds = schema.get("type")
    if kinds is not None:
        kinds = [kinds] if isinstance(kinds, str) else list(kinds)
        if not any(_TYPES[k](value) for k in kinds):
            raise ValueError(f"{path} must be {' or '.join(kinds)}, got {type(value).__name__}")
    if "enum" in schema and value not in schema["enum"]:
        raise ValueError(f"{path} must be one of {schema['enum']}, got {value!r}")
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            raise ValueError(f"{path} must have at least {schema['minLength']} characters")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            raise ValueError(f"{path} must have at most {schema['maxLength']} characters")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            raise ValueError(f"{path} must be >= {schema['minimum']}, got {value}")
        if "maximum" in schema and value > schema["maximum"]:
            raise ValueError(f"{path} must be <= {schema['maximum']}, got {value}")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            raise ValueError(f"{path} must have at least {schema['minItems']} entries, got {len(value)}")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            raise ValueError(f"{path} must have at most {schema['maxItems']} entries, got {len(value)}")
        if "items" in schema:
            for i, entry in enumerate(value):
                check_json(entry, schema["items"], f"{path}[{i}]")
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        missing = [k for k in schema.get("required", ()) if k not in value]
        if missing:
            raise ValueError(f"{path} lacks {', '.join(missing)}")
        if schema.get("additionalProperties") is False:
            extra = sorted(set(value) - set(properties))
            if extra:
                raise ValueError(f"{path} has keys the schema does not allow: {', '.join(extra)}")
        for key, sub in properties.items():
            if key in value:
                check_json(value[key], sub, f"{path}.{key}")


def strict_object(properties: dict[str, Any]) -> dict[str, Any]:
    """An object schema in strict mode's form: every property required, no other key allowed."""
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def text(max_chars: int, min_chars: int = 0) -> dict[str, Any]:
    """A string of ``min_chars`` to ``max_chars`` characters (no ``minLength`` written when it is 0)."""
    schema: dict[str, Any] = {"type": "string", "maxLength": max_chars}
    return {"type": "string", "minLength": min_chars, "maxLength": max_chars} if min_chars else schema


def check_schema(schema: Any, path: str = "schema") -> None:
    """ValueError for a schema using anything outside the subset above (so no rule is silently skipped)."""
    if not isinstance(schema, Mapping):
        raise ValueError(f"{path} must be a JSON Schema object")
    unknown = sorted(set(schema) - _KEYS)
    if unknown:
        raise ValueError(f"{path} uses {', '.join(unknown)}, outside the supported subset")
    kinds = schema.get("type")
    for kind in [kinds] if isinstance(kinds, str) else kinds or []:
        if kind not in _TYPES:
            raise ValueError(f"{path}.type {kind!r} is not a JSON Schema type")
    for key, sub in (schema.get("properties") or {}).items():
        check_schema(sub, f"{path}.properties.{key}")
    if "items" in schema:
        check_schema(schema["items"], f"{path}.items")
    for i, branch in enumerate(schema.get("anyOf") or []):
        check_schema(branch, f"{path}.anyOf[{i}]")


__all__ = ["check_json", "check_schema", "strict_object", "text"]
