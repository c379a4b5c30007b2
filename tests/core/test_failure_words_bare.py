"""A failure whose exception has no message is said as its type alone (``EOFError``),
not ``EOFError: `` with a dangling colon, wherever dsh words one."""

from __future__ import annotations

from typing import Any

import pytest

from dsh.errors import DshError, exception_words
from dsh.tools import _why


def test_exception_words() -> None:
    assert exception_words(EOFError()) == "EOFError"
    assert exception_words(ValueError("bad")) == "ValueError: bad"


def test_a_tool_failing_with_a_group_says_each_bare_failure_as_its_type() -> None:
    said = _why(ExceptionGroup("tasks", [EOFError(), ValueError("bad")]))
    assert said.endswith(": EOFError; ValueError: bad"), said


def test_a_log_that_cannot_be_folded_says_a_bare_failure_as_its_type() -> None:
    from dsh._resume import _prepared

    class Sessions:
        def prepare(self, *args: Any, **kwargs: Any) -> Any:
            raise KeyError

    with pytest.raises(DshError) as raised:
        _prepared(Sessions(), "s", [], {})  # type: ignore[arg-type]
    assert str(raised.value).endswith("into a history: KeyError"), str(raised.value)
