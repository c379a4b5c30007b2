"""``AgentHandle.events()``: an agent's session events handed to whoever reads them.

A plugin of the harness (``dsh-events``, registered when first needed, so a harness
whose events nobody watches pays nothing) observes ``session_event`` and puts each
watched session's events on the memory streams of its readers. It never waits for a
reader: the streams are unbounded, and one whose reader has gone is dropped. When the
agent is disposed, its streams end.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import anyio

from dsh.hookspecs import hookimpl

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

    from dsh.agent import Agent
    from dsh.plugins import PluginManager
    from dsh.session import Session, SessionEvent

__all__ = ["NAME", "EventWatch", "event_watch"]

NAME = "dsh-events"


class EventWatch:
    """Registered as plugin ``dsh-events``: session id -> the streams of its readers."""

    def __init__(self) -> None:
        self.readers: dict[str, list[MemoryObjectSendStream[SessionEvent]]] = {}

    def watch(self, session_id: str) -> MemoryObjectReceiveStream[SessionEvent]:
        send, receive = anyio.create_memory_object_stream["SessionEvent"](math.inf)
        self.readers.setdefault(session_id, []).append(send)
        return receive

    def end(self, session_id: str) -> None:
        """The session's events are over: each reader's ``async for`` ends once it has
        read those sent already."""
        for send in self.readers.pop(session_id, ()):
            send.close()

    def unwatch(self, session_id: str, receive: MemoryObjectReceiveStream[SessionEvent]) -> None:
        receive.close()  # its send stream is then dropped at the next event, or here
        self._prune(session_id)

    @hookimpl
    def session_event(self, session: Session, event: SessionEvent) -> None:
        streams = self.readers.get(session.id)
        if streams:
            gone = False
            for send in streams:
                try:
                    send.send_nowait(event)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    gone = True  # its reader has left
            if gone:
                self._prune(session.id)

    @hookimpl
    def agent_disposed(self, agent: Agent) -> None:
        self.end(agent.session.id)  # after its last event (turn/end, disposed)

    def _prune(self, session_id: str) -> None:
        kept = []
        for send in self.readers.get(session_id, ()):
            if send.statistics().open_receive_streams:
                kept.append(send)
            else:
                send.close()
        if kept:
            self.readers[session_id] = kept
        else:
            self.readers.pop(session_id, None)


def event_watch(pm: PluginManager) -> EventWatch:
    """The harness's ``dsh-events`` plugin, registered on first use."""
    watch = pm.get_plugin(NAME)
    if not isinstance(watch, EventWatch):
        watch = EventWatch()
        pm.register(watch, NAME)
    return watch
