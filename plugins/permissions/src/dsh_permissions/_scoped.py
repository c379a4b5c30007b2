"""A scope kept in a ``ContextVar``, for one checked call or line: ``scoped(var, make)``
sets ``var`` to a fresh ``make()`` on entering and resets it on leaving; nested inside
another scope of ``var``, it keeps the outer one's value (``_splits.one_split``,
``_option_variables.line_variables``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

__all__ = ["scoped"]

_T = TypeVar("_T")


@contextmanager
def scoped(var: ContextVar[_T | None], make: Callable[[], _T]) -> Iterator[None]:
    """Inside, ``var`` holds a value: the enclosing scope's, or a new ``make()``."""
    if var.get() is not None:
        yield
        return
    token = var.set(make())
    try:
        yield
    finally:
        var.reset(token)
