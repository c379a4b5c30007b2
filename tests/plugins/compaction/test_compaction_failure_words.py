"""A compaction failing with an exception that has no message logs its type alone."""

from __future__ import annotations

from dsh_compaction._failures import error_of


def test_a_bare_failure_is_said_as_its_type() -> None:
    error = error_of(EOFError(), None)  # type: ignore[arg-type]
    assert error == {"code": "INTERNAL", "message": "EOFError"}
