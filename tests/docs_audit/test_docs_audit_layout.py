"""How the user docs read as text: no paragraph left behind by a move (a line of prose
starting with one space, mid-sentence), and paragraphs under the heading they are about."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from docs_files import ROOT, USER_DOCS


def _prose_lines(text: str) -> list[tuple[int, str]]:
    """``text``'s lines outside code fences, with their numbers."""
    lines, fenced = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            lines.append((number, line))
    return lines


@pytest.mark.parametrize("path", USER_DOCS, ids=lambda path: str(path.relative_to(ROOT)))
def test_no_prose_line_starts_with_a_single_space(path: Path) -> None:
    """Was: docs/testing.md held " Its `context_window`, ..." after the paragraph on
    ``run_turn(timeout=)``, a ScriptedModel's paragraph left behind by a move."""
    text = path.read_text(encoding="utf-8")
    stray = [(n, line) for n, line in _prose_lines(text) if re.match(r" \S", line)]
    assert stray == []


def test_the_scripted_models_limits_are_told_with_the_scripted_model() -> None:
    text = (ROOT / "docs" / "testing.md").read_text(encoding="utf-8")
    exhausted = text.index("error when the script runs out.")
    limits = text.index("A ScriptedModel's `context_window`, `max_output_tokens` and `max_wait`")
    hang = text.index("A `hang()` entry waits for an abort")
    assert exhausted < limits < hang
