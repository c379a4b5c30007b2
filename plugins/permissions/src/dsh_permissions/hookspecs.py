"""The hook dsh-permissions adds: ``permission_ask``, answered by a front end.

A front end that serves any plugin asking (a terminal prompt, an ACP client, a chat
bridge) implements the core's ``tools_approval`` instead (``dsh.approvals``), which
dsh-permissions asks when no ``permission_ask`` impl answers: ``dsh chat`` does. This
hook is for a front end of dsh-permissions alone, which sees the whole
``PermissionRequest`` (mode, rule, subjects). The hook is added when dsh-permissions is
registered, and entry points load in name order, so a front end must mark its impl
``optionalhook=True``::

    from dsh import hookimpl
    from dsh_permissions import PermissionAnswer

    @hookimpl(optionalhook=True)
    async def permission_ask(request):
        ok = await my_prompt(f"{request.tool}: {request.reason} — allow?")
        return PermissionAnswer.once() if ok else PermissionAnswer.deny("not now")
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dsh import hookspec

if TYPE_CHECKING:
    from dsh import ToolCall
    from dsh.agent import Agent
    from dsh_permissions._approvals import PermissionAnswer, PermissionRequest

__all__ = ["permission_ask"]


@hookspec(firstresult=True)
def permission_ask(
    agent: Agent, call: ToolCall, request: PermissionRequest
) -> PermissionAnswer | None:
    """**firstresult** — ask a person whether a tool call may run.

    Called when the rules say ``ask``, with what needs approval and why. Return a
    ``PermissionAnswer``: ``once()`` runs this call, ``always()`` also remembers
    ``request.remember`` for the rest of the session (logged, kept on resume),
    ``deny(message)`` refuses it and tells the model ``message``. Return None when this
    front end cannot ask (no terminal, not its agent) so the next one may; when none
    answers, the core's ``tools_approval`` front ends are asked. Impls should be
    ``async def``: a blocking impl stalls the agent and escapes the timeout.

    Fails closed: no answer from any impl of either hook, a raising impl (of either:
    after a ``permission_ask`` impl raises no other front end is asked), an answer of
    another type, or no answer within ``ask_timeout`` seconds (for both hooks together)
    denies the call.
    """
