"""``run_turn``: send a prompt, wait until the agent is idle, return the events it added;
with a timeout, one that stops that prompt only and never waits unbounded."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dsh.agent import AgentHandle
    from dsh.session import SessionEvent

__all__ = ["run_turn"]


async def run_turn(
    agent: AgentHandle,
    prompt: str,
    *,
    timeout: float | None = None,  # noqa: ASYNC109 - it stops the prompt, as a cancel scope cannot
) -> list[SessionEvent]:
    """Send ``prompt``, wait until the agent is idle, return the events it added. A turn
    that ends in error returns normally (its ``turn/end`` says so).

    ``timeout`` (seconds) bounds the wait, and ``TimeoutError`` is raised when it is up:
    the prompt, if no turn has taken it yet (another caller's turn running), is taken
    back and never runs, that turn left running; the turn that took it, if still
    running, is aborted and waited for ``timeout`` more at most (a step that does not
    heed the abort leaves the agent busy: the error says so); a later turn (a prompt
    queued after it) is left running."""
    import inspect

    import anyio

    from dsh.inbox import Prompt, check_prompt

    given: object = agent  # typed an agent; a test may still pass the coroutine
    if inspect.isawaitable(given):  # ``h.agents.create(...)`` not awaited
        raise TypeError(
            "run_turn's agent is an awaitable, not an agent: await what made it "
            "(agent = await h.agents.create(...))"
        )
    start = len(agent.session.events)
    if timeout is None:
        agent.send(prompt)
        await agent.when_idle()
        return list(agent.session.events[start:])
    check_prompt(prompt)  # before it is made a Prompt: 42 is not "42"
    loop = agent.agent
    mine = Prompt(prompt)  # its own object, told apart from an equal prompt of another's
    loop.send_awaited(mine)
    done = False
    try:
        with anyio.move_on_after(timeout) as waited:
            await loop.when_done(mine)
            done = True
            await agent.when_idle()
        if not waited.cancelled_caught:
            return list(agent.session.events[start:])
        late = f"run_turn: the turn did not end within {timeout} s"
        if done:
            raise TimeoutError(
                f"run_turn: the agent was not idle within {timeout} s: the prompt's turn "
                "ended, a later turn is still running, left running"
            )
        if loop.withdraw(mine):
            raise TimeoutError(
                f"run_turn: the prompt did not start within {timeout} s: the agent was busy "
                "with another turn, left running; the prompt was taken back and will not run"
            )
        aborted = loop.is_running(mine)  # else it has ended, and is being saved
        if aborted:
            agent.abort()
        with anyio.move_on_after(timeout) as grace:
            await loop.when_done(mine)
        said = f"{late}; it was aborted" if aborted else f"{late} (saving its end)"
        if grace.cancelled_caught:
            said += f", and had not ended {timeout} s later: the agent is still busy"
        raise TimeoutError(said)
    finally:
        loop.taken_by(mine)  # forget it
