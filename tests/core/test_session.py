"""Session internals not covered by the numbered behaviours: history snapshots."""

from __future__ import annotations

from dsh.messages import UserMessage
from dsh.session import Session


def test_history_views_are_snapshots_that_slice_like_lists() -> None:
    session = Session("s")
    for index in range(5):
        session.append("user/message", {"content": str(index)})
    view = session.history
    session.append("user/message", {"content": "later"})
    assert len(view) == 5
    assert [m.content for m in view] == ["0", "1", "2", "3", "4"]  # type: ignore[union-attr]
    assert list(view[1:3]) == [UserMessage(content="1"), UserMessage(content="2")]
    assert list(view[-2:]) == [UserMessage(content="3"), UserMessage(content="4")]
    assert list(view[::2]) == [UserMessage(content=c) for c in ("0", "2", "4")]
    assert view[-1] == UserMessage(content="4")
    assert len(session.history) == 6
