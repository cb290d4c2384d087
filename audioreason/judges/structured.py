"""Structured outputs: a verdict schema as the JSON Schema ``response_format`` that OpenAI and vLLM accept.

    {"type": "json_schema", "json_schema": {"name": "verdict", "strict": true, "schema": {...}}}

A judge opts in with a true ``structured_outputs`` attribute (``OpenAICompatibleJudge(structured_outputs=True)``,
the CLI's ``--judge-structured-outputs``); ``JudgeRunner`` then sends each request's schema with it. Off by
default, and never in MMAR-Rubrics' compat mode: the official scorer sends no ``response_format``.

The JSON Schema keeps to the subset OpenAI's strict mode accepts (an object at the root, every property
required, ``additionalProperties: false``, ``enum``, ``anyOf``, ``minItems``/``maxItems``), so one schema serves
OpenAI, vLLM (xgrammar/guidance/outlines) and llama.cpp's server:
  * criteria: ``{"verdicts": [k objects]}`` (strict mode wants an object at the root; the reply parser takes a
    list wrapped in an object as the list). Each object is ``{"name", "score", "justification"}``; the name is one
    of the criteria's (``enum``) and the score one of *that* criterion's options (one ``anyOf`` branch per
    criterion); exactly k objects. The order and "each name once" are not expressible without ``prefixItems``
    (not in OpenAI's subset): the parser still checks them and re-asks.
  * criteria matched by position (``match_names=False``): any name, a score from the union of the options;
  * one score: ``{"<score field>": one of the options, "justification": string}``;
  * a ``JsonReplySchema`` is sent with its own ``json_schema`` under its own name (the construction pipeline's
    stages); one without (rubric generation) sends nothing.

Sources: OpenAI, "Structured Outputs" guide (https://platform.openai.com/docs/guides/structured-outputs, the
supported schema subset); vLLM, "Structured Outputs" (https://docs.vllm.ai/en/stable/features/structured_outputs/).
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from .verdicts import JUSTIFICATION_KEY, NAME_KEY, SCORE_KEY, JsonReplySchema, ReplySchema, VerdictSchema

RESPONSE_FORMAT_NAME = "verdict"
WRAPPER_KEY = "verdicts"


def _score_schema(options: Sequence[Any]) -> dict[str, Any]:
    values = sorted(set(options), key=float)
    kind = "integer" if all(float(v).is_integer() for v in values) else "number"
    return {"type": kind, "enum": [int(v) if kind == "integer" else float(v) for v in values]}


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def verdict_json_schema(schema: ReplySchema) -> Optional[dict[str, Any]]:
    """The JSON Schema of a reply that ``schema`` accepts; None for a schema that has none (``JsonReplySchema``)."""
    if not isinstance(schema, VerdictSchema):
        return None
    justification = {"type": "string"}
    if schema.kind == "score":
        return _object({schema.score_field: _score_schema(schema.allowed_scores), JUSTIFICATION_KEY: justification})
    if schema.match_names:
        branches = [
            _object(
                {
                    NAME_KEY: {"type": "string", "enum": [c.name]},
                    SCORE_KEY: _score_schema(c.allowed),
                    JUSTIFICATION_KEY: justification,
                }
            )
            for c in schema.criteria
        ]
        item = branches[0] if len(branches) == 1 else {"anyOf": branches}
    else:
        options = [a for c in schema.criteria for a in c.allowed]
        item = _object(
            {NAME_KEY: {"type": "string"}, SCORE_KEY: _score_schema(options), JUSTIFICATION_KEY: justification}
        )
    listing = {"type": "array", "items": item, "minItems": schema.k, "maxItems": schema.k}
    return _object({WRAPPER_KEY: listing})


def response_format(schema: ReplySchema) -> Optional[dict[str, Any]]:
    """The ``response_format`` request field for ``schema`` (None: send none)."""
    if isinstance(schema, JsonReplySchema):
        if schema.json_schema is None:
            return None
        return {
            "type": "json_schema",
            "json_schema": {"name": schema.name, "strict": True, "schema": schema.json_schema},
        }
    body = verdict_json_schema(schema)
    if body is None:
        return None
    return {"type": "json_schema", "json_schema": {"name": RESPONSE_FORMAT_NAME, "strict": True, "schema": body}}


__all__ = ["RESPONSE_FORMAT_NAME", "WRAPPER_KEY", "response_format", "verdict_json_schema"]
