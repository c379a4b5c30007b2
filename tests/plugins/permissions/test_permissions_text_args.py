"""Which argument values hold text to check: every shape ``@tool`` accepts for a path
argument (``dsh._tool_checks.check_text_arguments``) is read, not refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh_permissions._calls import InvalidArguments, _texts


@pytest.mark.parametrize(
    "value", [["a", "b"], ("a", "b"), {"a", "b"}, frozenset({"a", "b"}), [Path("a"), "b"]]
)
def test_a_collection_of_paths_is_each_path(value: object) -> None:
    """``paths: set[str]`` (which ``@tool`` accepts) was refused: "should hold text,
    not set"."""
    assert sorted(_texts("paths", value)) == ["a", "b"]


def test_what_holds_no_text_is_refused_naming_the_argument() -> None:
    with pytest.raises(InvalidArguments, match="argument 'spec' should hold text, not dict"):
        _texts("spec", {"a": "b"})
