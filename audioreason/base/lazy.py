"""A package's public names imported on first use: a package whose modules need heavy libraries (torch,
datasets, scipy) keeps every name importable from it while ``import audioreason.<package>`` itself imports
none of them, so a command that reads only text never pays for them."""

from __future__ import annotations

import importlib
import sys
from typing import Any, Callable, Mapping


def lazy_exports(package: str, names: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's module-level ``(__getattr__, __dir__)``. ``names``: public name -> ``"module"`` or
    ``"module:attribute"`` (relative to the package when it starts with a dot; the attribute defaults to the
    name). A name is imported on its first access and then kept in the package."""

    def __getattr__(name: str) -> Any:
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attribute = names[name].partition(":")
        value = getattr(importlib.import_module(module, package), attribute or name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(names))

    return __getattr__, __dir__


__all__ = ["lazy_exports"]
