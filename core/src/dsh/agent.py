"""Agents: the ``Agent`` protocol every hook receives."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from dsh.hookspecs import AgentStatus
    from dsh.session import Session

__all__ = ["Agent"]


@runtime_checkable
class Agent(Protocol):
    """What a hook impl may rely on about the agent it is called for."""

    @property
    def id(self) -> str: ...

    @property
    def session(self) -> Session: ...

    @property
    def status(self) -> AgentStatus: ...

    @property
    def options(self) -> dict[str, Any]: ...

    def send(self, prompt: str) -> None: ...

    def steer(self, prompt: str) -> None: ...

    def abort(self) -> None: ...

    def cancel(self) -> None: ...

    async def when_idle(self) -> None: ...
