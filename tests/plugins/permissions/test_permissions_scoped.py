"""``_scoped.scoped``: the scope ``one_split`` and ``line_variables`` share. A fresh
value on entering, the outer one kept when nested, and none again on leaving (also
when leaving by an exception)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from contextvars import ContextVar
from typing import Any

import pytest

from dsh_permissions._option_variables import _LINE as VARIABLES
from dsh_permissions._option_variables import line_variables
from dsh_permissions._scoped import scoped
from dsh_permissions._splits import _LINE as SPLITS
from dsh_permissions._splits import one_split

VAR: ContextVar[list[str] | None] = ContextVar("test_scoped", default=None)


def test_a_scope_is_fresh_outside_and_kept_inside() -> None:
    made: list[list[str]] = []

    def make() -> list[str]:
        made.append([])
        return made[-1]

    with scoped(VAR, make):
        outer = VAR.get()
        assert outer is made[0]
        with scoped(VAR, make):
            assert VAR.get() is outer
        assert VAR.get() is outer
    assert VAR.get() is None
    with scoped(VAR, make):
        assert VAR.get() is made[1]
    assert len(made) == 2


def test_leaving_by_an_exception_resets_the_scope() -> None:
    with pytest.raises(ValueError, match="out"), scoped(VAR, list):
        raise ValueError("out")
    assert VAR.get() is None


@pytest.mark.parametrize(("enter", "var"), [(one_split, SPLITS), (line_variables, VARIABLES)])
def test_one_split_and_line_variables_keep_the_outer_scope(
    enter: Callable[[], AbstractContextManager[None]], var: ContextVar[Any]
) -> None:
    assert var.get() is None
    with enter():
        outer = var.get()
        assert outer is not None
        with enter():
            assert var.get() is outer
    assert var.get() is None
