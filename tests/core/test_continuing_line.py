"""The few words that say which stored session is continued (core/src/dsh/_cli_agent.py
``continuing``): the first prompt quoted, its control characters escaped once (repr over
shorten's escapes doubled each backslash: ``'title\\\\x1b[31mred'``)."""

from __future__ import annotations

from dsh._cli_agent import continuing
from dsh._event import SessionEvent
from dsh.persistence import StoredSession


def _stored(prompt: str) -> StoredSession:
    return StoredSession("s1", 0.0, [SessionEvent("user/message", 1, 0.0, {"content": prompt})])


def test_an_escape_in_the_first_prompt_is_shown_escaped_once() -> None:
    assert continuing(_stored("title\x1b[31mred"), 1) == "'title\\x1b[31mred', 1 turn so far"


def test_a_quote_in_the_first_prompt_is_quoted_otherwise() -> None:
    assert continuing(_stored("it's here"), 2) == '"it\'s here", 2 turns so far'
    assert continuing(_stored("plain"), 2) == "'plain', 2 turns so far"
