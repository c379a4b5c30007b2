"""``/resume ID`` of ``dsh chat``: continue a stored session in place of the chat's
own, which goes on when the other cannot be taken (busy, unknown, in use elsewhere)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from dsh._cli_agent import continuing, resume_options
from dsh._cli_continue import no_store
from dsh._visible import visible
from dsh.errors import DshError
from dsh.persistence import find_session, shown_id

if TYPE_CHECKING:
    from dsh._handle import AgentHandle
    from dsh._render import Renderer
    from dsh.harness import Harness

__all__ = ["resume"]


async def resume(
    harness: Harness,
    agent: AgentHandle,
    session_id: str,
    renderer: Renderer,
    fail: Callable[[str], None],
) -> AgentHandle:
    """``/resume ID``: continue a stored session in place of the current one. The
    current agent is kept when the agent is busy or the session cannot be loaded."""
    if not session_id:
        fail("  /resume needs a session id (see `dsh sessions list`)")
        return agent
    if agent.agent.status != "idle" or agent.agent.inbox.queued:
        fail(
            "  /resume: the agent is working; wait for the turn to end (or cancel it "
            "with Ctrl-C) and resume again",
        )
        return agent
    try:
        service = await harness.relay.session_persistence(harness)
        if service is None:  # why, and what to do: as dsh chat --continue says it
            raise DshError(f"no plugin stores sessions ({no_store(harness.pm)})")
        session_id = await find_session(service, session_id)  # a unique prefix will do
        stored = await harness.agents.load_stored(session_id)
    except DshError as error:
        fail(f"  /resume: {_clause(error)}; this chat goes on")
        return agent
    # On the chat's model: what the config says now for the agent that created the
    # session, over the options stored with it (a rule tightened since applies).
    options = resume_options(harness, stored, str(agent.agent.options.get("model")))
    current, current_options = agent.session.id, dict(agent.agent.options)
    await agent.dispose()
    try:
        resumed = await harness.agents.resume_stored(agent.id, stored, options)
    except DshError as error:  # refused (in use elsewhere, its options): this chat goes on
        fail(f"  /resume: {_clause(error)}; this chat goes on")
        try:
            return await harness.agents.resume(agent.id, current, current_options)
        except DshError:  # never stored (no turn yet): the same session, new again
            pass
        try:
            return await harness.agents.create(agent.id, current, options=current_options)
        except DshError:  # stored meanwhile, and taken by another process: a new one
            resumed = await harness.agents.create(agent.id, options=current_options)
            renderer.session_id = resumed.session.id
            print(f"dsh: new session {resumed.session.id}", file=sys.stderr)
            return resumed
    renderer.session_id = resumed.session.id
    said = continuing(stored, resumed.agent.turns)  # as at start-up
    print(visible(f"  continuing session {shown_id(resumed.session.id)} ({said})"), file=sys.stderr)
    return resumed


def _clause(error: DshError) -> str:
    """``error`` as a clause with more said after it (its own full stop dropped), its
    control characters shown as escapes (the ids it lists may hold a bidi control)."""
    return visible(str(error).rstrip("."))
