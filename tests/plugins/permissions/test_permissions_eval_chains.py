"""A chain of ``eval`` costs one split per level (review of session 43, finding 2).

The checks that look behind ``eval`` (where the line may move, ``_moved``; a trap that
may move it, ``_traps``; its subjects, ``_commands``) each split the text again from
the start of their own chain, at every level: ``eval eval ... cat x`` split its text
about k * k times, and a 64 KB line held the event loop for minutes. Each distinct text
is now split once per checked line (``_splits``). Counted, not timed.
"""

from __future__ import annotations

import pytest

from dsh_permissions import _shell
from dsh_permissions._commands import command_subjects
from dsh_permissions._shell import MAX_DEPTH

pytestmark = pytest.mark.plugins("permissions")

TAILS = ["cat x", "trap 'cd /' DEBUG; cat x", "cd src; cat x"]


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The lines ``_shell.split`` parses (not the nested ``$(...)`` of one)."""
    found: list[str] = []
    init = _shell._Parser.__init__

    def counted(self: object, s: str, depth: int, out: list[_shell.Command]) -> None:
        if depth == 0:
            found.append(s)
        init(self, s, depth, out)  # type: ignore[arg-type]

    monkeypatch.setattr(_shell._Parser, "__init__", counted)
    return found


@pytest.mark.parametrize("tail", TAILS)
@pytest.mark.parametrize("k", [1, 4, 8, MAX_DEPTH])
def test_each_level_of_an_eval_chain_is_split_once(layout, parses, k, tail):
    command_subjects("eval " * k + tail, str(layout.ws), reads=True)
    assert len(parses) <= k + 2, len(parses)  # was 117 for k=8, 425 for k=16


@pytest.mark.parametrize("tail", TAILS)
def test_a_chain_deeper_than_the_checks_go_is_asked_about_at_a_bounded_cost(layout, parses, tail):
    subjects = command_subjects("eval " * 50 + tail, str(layout.ws), reads=True)
    assert len(parses) <= 2 * (MAX_DEPTH + 2), len(parses)  # was 884
    assert any("nested more than" in (s.problem or "") for s in subjects), subjects


async def test_a_line_running_more_text_than_is_split_for_one_is_asked_about(judge):
    """Each level of ``eval`` runs a text of its own: past ``MAX_SPLIT`` characters in
    all the line is asked about, even under a rule allowing every command (was: 15
    levels of a 32 KB line allowed after 20 s, the event loop held)."""
    line = "eval " * 15 + "cat " + "x " * 16000
    assert (await judge({"allow": ["bash"]}, "bash", {"command": line})).decision == "ask"
    assert (await judge({"allow": ["bash"]}, "bash", {"command": line[75:]})).decision == "allow"


def test_a_text_only_a_later_check_splits_counts_as_well(layout, monkeypatch):
    """A check looking behind ``eval`` (here where the line may move, ``_moved``) that
    cannot split a text for the budget takes it for no commands: the line is then a
    problem all the same, not checked as if the text ran nothing."""
    from dsh_permissions import _moved, _splits

    def spends(line: str) -> list[_shell.Command]:
        scope = _splits._LINE.get()
        assert scope is not None
        scope.left, scope.kept = -1, {}
        return _splits.split(line)  # raises: spent

    monkeypatch.setattr(_moved, "split", spends)
    subjects = command_subjects("eval cd src; cat x", str(layout.ws), reads=True)
    assert any("more than" in (s.problem or "") for s in subjects), subjects
