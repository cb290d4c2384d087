"""Whether an adapter option's value has the type its constructor declares. A sweep file's options are YAML
values that no argparse ``type=`` has converted: a list where a number belongs must be a one-line error naming
the key before any model loads, not a TypeError inside the constructor. Ranges stay the constructors' own
checks (a ValueError when the model is built)."""

from __future__ import annotations

import collections.abc
import types
import typing
from typing import Any, Callable, Iterable, Optional


def declared_types(targets: Iterable[Callable]) -> dict[str, Any]:
    """The parameters' resolved annotations of each target (a class: its constructor's); a target whose
    annotations do not resolve declares none (its constructor still checks what it is given)."""
    hints: dict[str, Any] = {}
    for target in targets:
        try:
            hints.update(typing.get_type_hints(target.__init__ if isinstance(target, type) else target))
        except (NameError, TypeError):
            continue
    hints.pop("return", None)
    return hints


def type_mismatch(value: Any, hint: Any) -> Optional[str]:
    """None when ``value`` fits ``hint``; else what was expected, in words ("a number or null")."""
    return None if _fits(value, hint) else _describe(hint)


def _fits(value: Any, hint: Any) -> bool:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, a) for a in args)
    if origin is typing.Literal:
        return value in args
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    kind = origin or hint
    if isinstance(kind, type) and issubclass(kind, collections.abc.Mapping):
        return isinstance(value, dict)
    if isinstance(kind, type) and issubclass(kind, (list, tuple, collections.abc.Sequence)):
        return isinstance(value, list)
    return True  # Any, a callable, a class: the constructor's own check


def _describe(hint: Any) -> str:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(dict.fromkeys(_describe(a) for a in args))
    if origin is typing.Literal:
        return "one of " + ", ".join(map(repr, args))
    names = {type(None): "null", bool: "true or false", int: "an integer", float: "a number", str: "a string"}
    if hint in names:
        return names[hint]
    kind = origin or hint
    return "a mapping" if isinstance(kind, type) and issubclass(kind, collections.abc.Mapping) else "a list"


__all__ = ["declared_types", "type_mismatch"]
