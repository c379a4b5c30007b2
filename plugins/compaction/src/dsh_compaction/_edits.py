"""Carrying an earlier plugin's change of a request's messages onto the compacted history.

Compaction's ``agent_request`` impl is ``tryfirst``, but a plugin's own ``tryfirst``
impl may still run before it and change ``request.messages`` (add a note, drop or
rewrite a message). When compaction then replaces the history, the request is rebuilt
from the compacted history, and that change is carried over where it can be: what the
plugin did after the compacted region (appended, inserted, replaced or dropped in the
tail the compaction kept verbatim) and what it put before the whole history. A change
inside the compacted region has nothing left to apply to: the request is sent without
it, and a warning names the plugin whose impl ran before compaction's, or when several
did, all of them (see ``_who``: which one made the change cannot be known).
"""

from __future__ import annotations

from collections.abc import Sequence

import dsh_compaction
from dsh import Message, ModelRequest, get_logger
from dsh.session import HistoryView
from dsh_compaction import _host

__all__ = ["carry_edit", "rebuilt_request", "same_messages"]

log = get_logger("dsh_compaction")


def same_messages(a: Sequence[Message], b: Sequence[Message]) -> bool:
    """Whether ``a`` and ``b`` hold the same message objects, in order."""
    if isinstance(a, HistoryView) and isinstance(b, HistoryView):
        return len(a) == len(b) and a.continues(b)
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


def carry_edit(
    old: Sequence[Message], sent: Sequence[Message], new: Sequence[Message]
) -> Sequence[Message] | None:
    """``new`` (``old`` compacted) with the change that turned ``old`` into ``sent``;
    None when that change is in the part of ``old`` that ``new`` no longer holds as is.

    Messages are matched by identity: the compacted history holds its tail as the very
    objects of ``old``, and a plugin's change is the span between the longest common
    start and end of ``old`` and ``sent``.
    """
    n, m = len(old), len(sent)
    start = 0
    while start < n and start < m and sent[start] is old[start]:
        start += 1
    if start == n == m:
        return new
    end = 0
    while end < min(n, m) - start and sent[m - 1 - end] is old[n - 1 - end]:
        end += 1
    if end == n:  # only put before the whole history
        return [*sent[: m - n], *new]
    # the change and everything after it must be the end of ``new``, unchanged
    rest = n - start
    offset = len(new) - rest
    if offset < 0 or any(new[offset + i] is not old[start + i] for i in range(rest)):
        return None
    return [*new[:offset], *sent[start:]]


def rebuilt_request(
    agent: _host.Host,
    request: ModelRequest,
    old: Sequence[Message],
) -> ModelRequest:
    """``request`` rebuilt from the agent's history, which replaced ``old`` (the history
    the request was built from), with the change earlier impls made to its messages
    carried over (see ``carry_edit``), else with a warning that it was left out."""
    new = agent.session.history
    sent = request.messages
    if same_messages(sent, old):
        messages: Sequence[Message] = new
    else:
        carried = carry_edit(old, sent, new)
        if carried is None:
            log.warning(
                "agent %r: %s changed the request's messages in the part of the history "
                "that was compacted; the compacted request is sent without that change",
                agent.id,
                _who(agent),
            )
            messages = new
        else:
            messages = carried
    return request.model_copy(update={"messages": messages})


def _who(agent: _host.Host) -> str:
    """Who changed the request: the one plugin whose ``agent_request`` runs before
    compaction's, else the plugins that do, one of which did.

    Which of several it was cannot be known: the dispatcher's waterfall hands
    compaction's impl the request as they all left it, not as each one did, and running
    their impls again to find out would run a plugin's hook twice per step."""
    before = _host.plugins_before(agent, "agent_request", dsh_compaction.agent_request)
    if len(before) == 1:
        return f"the plugin {before[0]!r}, whose agent_request runs before compaction's,"
    named = ", ".join(map(repr, before)) or "unknown"
    return (
        f"one of the plugins whose agent_request runs before compaction's ({named}; "
        "which one cannot be told)"
    )
