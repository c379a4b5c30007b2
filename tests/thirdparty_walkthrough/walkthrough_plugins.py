"""Three plugins a third-party author wrote from the docs alone (README.md,
docs/writing-plugins.md, hooks.md, testing.md): a budget guard with a validated
``budget:`` section, an async tool that sometimes raises, and an audit observer that
logs an event type of its own inside the turn. The tests pass them to the harness
(``scripted_harness(plugins=[(name, plugin)])``), never through entry points."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, PositiveInt

from dsh import ContinuationDecision, hookimpl

if TYPE_CHECKING:
    from collections.abc import Callable

    from dsh import AssistantMessage, ModelRequest
    from dsh.session import Session, SessionEvent

__all__ = ["AuditLog", "BudgetGuard", "BudgetSettings", "Lookup"]


class BudgetSettings(BaseModel):
    """The ``budget:`` section of dsh.yml (and an agent's ``options.budget``)."""

    model_config = ConfigDict(extra="forbid")

    max_tool_calls: PositiveInt | None = None
    max_tokens: PositiveInt | None = None


class BudgetGuard:
    """Stops a turn once its tool calls or its tokens (input + output, as the model
    reported them) reach the budget, giving the reason ``dsh run`` shows."""

    def __init__(self) -> None:
        # per session: the turn being counted, its tool calls and its tokens (only the
        # current turn is kept, so nothing grows with the session)
        self.spent: dict[str, tuple[int, int, int]] = {}

    def _spent(self, agent: Any, turn: int) -> tuple[int, int]:
        counted, calls, tokens = self.spent.get(agent.session.id, (turn, 0, 0))
        return (calls, tokens) if counted == turn else (0, 0)

    @hookimpl
    def register_settings(self, register: Callable[..., None]) -> None:
        register(BudgetSettings)

    @hookimpl
    def agent_step_result(self, agent: Any, message: AssistantMessage, turn: int) -> None:
        calls, tokens = self._spent(agent, turn)
        usage = message.usage
        calls += len(message.tool_calls)
        tokens += usage.input_tokens + usage.output_tokens
        self.spent[agent.session.id] = (turn, calls, tokens)

    @hookimpl
    def agent_disposed(self, agent: Any) -> None:
        self.spent.pop(agent.session.id, None)

    @hookimpl
    def agent_turn_continuation(
        self, agent: Any, decision: ContinuationDecision, turn: int
    ) -> ContinuationDecision | None:
        section = agent.harness.config.section("budget")
        own = agent.options.get("budget") or {}
        base = section.model_dump(exclude_unset=True) if section is not None else {}
        budget = BudgetSettings(**{**base, **own})
        calls, tokens = self._spent(agent, turn)
        if decision.action == "stop":
            return None
        if budget.max_tool_calls is not None and calls >= budget.max_tool_calls:
            why = f"budget: {calls} tool calls (max {budget.max_tool_calls})"
        elif budget.max_tokens is not None and tokens >= budget.max_tokens:
            why = f"budget: {tokens} tokens (max {budget.max_tokens})"
        else:
            return None
        return ContinuationDecision(action="stop", reason=why)


class Lookup:
    """One async tool, ``lookup``, that raises for a key it does not know."""

    TABLE: dict[str, str] = {"a": "alpha", "b": "beta"}  # noqa: RUF012

    @hookimpl
    def register_tools(self, register: Callable[..., None]) -> None:
        import anyio.lowlevel

        from dsh.tools import tool

        table = self.TABLE

        @tool
        async def lookup(key: str) -> str:
            """Look a key up in a small table."""
            await anyio.lowlevel.checkpoint()  # a real await point
            if key not in table:
                raise LookupError(f"no entry {key!r}; known keys: {', '.join(table)}")
            return table[key]

        register(lookup)


class AuditLog:
    """Writes one JSON line per session event to ``path``, and logs an ``audit/step``
    event of its own at the start of every step (before the model is called). As
    hooks.md advises, ``session_event`` only buffers; ``session_flush`` writes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.pending: dict[str, list[str]] = {}

    @hookimpl
    def session_event(self, session: Session, event: SessionEvent) -> None:
        line = json.dumps({"session": session.id, "seq": event.seq, "type": event.type})
        self.pending.setdefault(session.id, []).append(line + "\n")

    @hookimpl
    async def session_flush(self, session: Session) -> None:
        import anyio

        lines = self.pending.pop(session.id, [])
        if lines:
            await anyio.to_thread.run_sync(self._append, lines)

    def _append(self, lines: list[str]) -> None:
        with self.path.open("a", encoding="utf-8") as file:
            file.writelines(lines)

    @hookimpl
    async def agent_request(self, agent: Any, request: ModelRequest, turn: int, step: int) -> None:
        data = {"turn": turn, "step": step, "tools": len(request.tools)}
        await agent.session.emit("audit/step", data)
