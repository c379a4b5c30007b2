"""Agents: the ``Agent`` protocol hooks receive; the public names ``AgentHandle`` (the
owner's grip on a live agent, ``dsh._handle``) and ``AgentRegistry`` (``harness.agents``,
``dsh._agents``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from dsh._agents import AgentRegistry
from dsh._handle import AgentHandle

if TYPE_CHECKING:
    from pathlib import Path

    from dsh._relay import HookRelay
    from dsh.harness import Harness
    from dsh.hookspecs import AgentStatus
    from dsh.llm.registry import ModelRegistry
    from dsh.session import Session
    from dsh.tools import ToolRegistry

__all__ = ["Agent", "AgentHandle", "AgentRegistry"]


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

    @property
    def harness(self) -> Harness | None:
        """The owning harness: ``harness.config.section(name)``, ``.models``, ``.tools``."""

    @property
    def relay(self) -> HookRelay:
        """Typed calls of every hook, and ``call_*`` for a plugin's own hooks."""

    @property
    def workspace(self) -> Path:
        """Where its file tools work and its commands run (``ToolContext``'s)."""

    @property
    def tools(self) -> ToolRegistry:
        """Its tools: ``get(name)`` (``mutating``, ``path_args`` ...), ``execute(call)``."""

    @property
    def models(self) -> ModelRegistry: ...

    def call_not_run(self, call_id: str) -> None:
        """Say that the call ``call_id`` was not run (a ``tools_execute`` impl cancelled
        before it ran it): its result then says so, not "it may have run"."""

    def send(self, prompt: str) -> None: ...

    def steer(self, prompt: str) -> None: ...

    def abort(self) -> None: ...

    def cancel(self) -> None: ...

    async def when_idle(self) -> None: ...
