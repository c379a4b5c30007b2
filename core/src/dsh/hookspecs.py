"""Every dsh hook: its signature, call style and meaning.

This module is the single source of the hooks reference (docs/hooks.md; a test keeps
the two in step). Each spec's docstring starts with its call style:

- **waterfall** — impls run in order; each sees the previous impl's value under the
  same argument name and returns a replacement, or None for "unchanged".
- **firstresult** — impls run in order until one returns non-None; later ones never run.
- **notify** — every impl runs; a raising impl is reported (plugin + hook) and the
  others still run.
- **gather** — every impl is awaited concurrently; after all settle the first failure
  is raised.
- **register** — called once at start-up with a ``register`` callback that stamps which
  plugin each registered thing came from.

Impls may be plain or ``async def`` functions and may take any subset of a hook's
arguments, so hooks grow by adding arguments without breaking plugins. Wrapper impls
(``wrapper=True`` / ``hookwrapper=True``) are rejected: they cannot await.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

import pluggy

if TYPE_CHECKING:
    from dsh.agent import Agent
    from dsh.approvals import ApprovalAnswer, ApprovalRequest
    from dsh.errors import ModelError
    from dsh.harness import Harness
    from dsh.messages import (
        AssistantMessage,
        ContinuationDecision,
        ModelRequest,
        RequestErrorDecision,
        ToolCall,
        ToolResult,
    )
    from dsh.persistence import SessionPersistence
    from dsh.session import Session, SessionEvent

__all__ = ["CALL_STYLES", "hookimpl", "hookspec"]

PROJECT = "dsh"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

CallStyle = Literal["waterfall", "firstresult", "notify", "setup", "gather", "register"]

#: How the typed relay calls each core hook (the docs and the registration checks use it).
CALL_STYLES: dict[str, CallStyle] = {
    "agent_request": "waterfall",
    "agent_step_result": "waterfall",
    "tools_execute": "firstresult",
    "tools_approval": "firstresult",
    "agent_turn_continuation": "waterfall",
    "agent_request_error": "waterfall",
    "session_event": "notify",
    "session_flush": "gather",
    "session_persistence": "firstresult",
    "harness_started": "setup",
    "harness_stopping": "notify",
    "agent_created": "notify",
    "agent_status": "notify",
    "agent_error": "notify",
    "agent_disposed": "notify",
    "register_tools": "register",
    "register_models": "register",
    "register_settings": "register",
    "register_secrets": "register",
    "register_commands": "register",
    "register_chat_commands": "register",
    "register_history_reducers": "register",
}

AgentStatus = Literal["idle", "running", "disposed"]


# -- interception: the agent loop ----------------------------------------------------


@hookspec
def agent_request(agent: Agent, request: ModelRequest, turn: int, step: int) -> ModelRequest | None:
    """**waterfall** — rewrite the request of a step before the model is called.

    Fires once per step, after steering was drained and the request was built from the
    system prompt, the tools and the derived history. Return a replacement request
    (another model, trimmed messages) or None to keep it. A raising impl ends the turn
    with reason ``error`` naming the plugin.
    """


@hookspec
def agent_step_result(
    agent: Agent, message: AssistantMessage, turn: int, step: int
) -> AssistantMessage | None:
    """**waterfall** — rewrite the assistant message of a step before it is logged.

    Fires after the model's stream ended. The returned message is what the log, the next
    request and tool dispatch see. Return None to keep it. A raising impl ends the turn
    with reason ``error``.
    """


@hookspec(firstresult=True)
def tools_execute(agent: Agent, call: ToolCall, turn: int, step: int) -> ToolResult | None:
    """**firstresult** — answer a tool call; the first non-None result wins.

    Fires once per tool call, in the model's order. The core's executor is a ``trylast``
    impl that runs the registered tool, so return None to let it (or a later plugin)
    run, or a ``ToolResult`` to answer instead (a denial, a cached result). A raising
    impl fails closed: the tool does not run and the model gets an error result naming
    the plugin.
    """


@hookspec
def agent_turn_continuation(
    agent: Agent, decision: ContinuationDecision, turn: int, step: int
) -> ContinuationDecision | None:
    """**waterfall** — decide whether the turn takes another step.

    Fires at the end of every step. The default decision is ``continue`` iff the step had
    tool calls, steering arrived (still queued: it is logged after the decision, if a
    step of this turn will answer it) or the provider paused the answer (stop reason
    ``paused``). Return ``stop`` to end the turn (budget guards) or
    ``continue`` with a ``reason`` to add that reason as steering for the next step.
    """


@hookspec
def agent_request_error(
    agent: Agent,
    request: ModelRequest,
    error: ModelError,
    decision: RequestErrorDecision,
    turn: int,
    step: int,
) -> RequestErrorDecision | None:
    """**waterfall** — decide what a failed model call leads to.

    Fires when the model call of a step raises (``error.code`` says why, e.g.
    ``CONTEXT_WINDOW_EXCEEDED``). The default decision is ``fail``: the turn ends
    ``error``. Return ``retry`` to call the model again for the same step; the step logs
    ``step/retry`` and runs ``agent_request`` again first (so a compaction plugin can
    shrink the history). Retries per step are bounded by the agent option
    ``max_request_retries`` (default 1).
    """


# -- front ends: asking a person ----------------------------------------------------


@hookspec(firstresult=True)
def tools_approval(agent: Agent, call: ToolCall, request: ApprovalRequest) -> ApprovalAnswer | None:
    """**firstresult** — ask a person whether a tool call may run: a front end answers.

    The core never calls it itself: a plugin that decides which calls need approval
    (dsh-permissions, for a call its rules mark ``ask``) asks with ``await
    agent.relay.tools_approval(agent, call, request)``. Return a
    ``dsh.approvals.ApprovalAnswer``: ``once()``, ``always()`` (also allow
    ``request.remember`` for the session) or ``deny(message)`` (the model reads
    ``message``); None when this front end cannot ask (no terminal, not its agent), so
    the next one may. Impls should be ``async def``: a blocking impl stalls the agent
    and escapes the asker's timeout, which cancels an async one.

    What a raising impl, or none answering, leads to is the asker's: dsh-permissions
    denies the call (fails closed), naming the plugin that failed.
    """


# -- observation: the session log ----------------------------------------------------


@hookspec
def session_event(session: Session, event: SessionEvent) -> None:
    """**notify** — an event was appended to a session's log.

    Fires for every event, in seq order, right after it entered the log. Every observer
    sees every event: an abort never cuts a notification short (async impls run
    shielded), so observers must be cheap and must not wait on the agent (buffer, do not
    write). Once the agent is aborted, cancelled or disposed, an async observer in
    flight has a grace (``dsh._grace.GRACE_SECONDS``, 5 s) to return; then it is
    cancelled and reported. A raising observer is reported and never stops the other
    observers or the loop.
    """


@hookspec
def session_flush(session: Session) -> None:
    """**gather** — make everything observed so far durable.

    Awaited after every ``turn/end`` and when an agent is disposed. All impls run
    concurrently; after all settle the first failure is raised to the loop, which
    reports it without logging anything after ``turn/end``.
    """


@hookspec(firstresult=True)
def session_persistence(harness: Harness | None) -> SessionPersistence | None:
    """**firstresult** — the service that lists, loads and deletes stored sessions.

    Asked when an agent is created or resumed (``agents.resume``) and by ``dsh
    sessions``. ``harness`` is the harness that asks (None when asked outside one): a
    plugin instance shared by several harnesses returns the store that harness's config
    chose. A persistence plugin returns its service; with none installed, resuming fails
    with a clear error naming the missing plugin.
    """


# -- lifecycle notifications ---------------------------------------------------------


@hookspec
def harness_started(harness: Harness) -> None:
    """**setup** — a harness started: its config is validated and models, tools and
    settings are registered; agents listed in the config are created right after.

    The place to read your validated config section (``harness.config.section(name)``)
    and to set up per-harness state. A raising impl stops start-up: the harness stops
    again and entering it raises HookError naming the plugin, before any agent exists.
    """


@hookspec
def harness_stopping(harness: Harness) -> None:
    """**notify** — a harness is stopping: every agent is disposed (and flushed) already."""


@hookspec
def agent_created(agent: Agent, source: Literal["startup", "create", "resume"]) -> None:
    """**notify** — an agent was created (from config at start-up, by code, or resumed).

    Every impl is called, also when the start is cancelled meanwhile (an async impl is
    then cancelled at its first await); the start is then undone, and every impl gets
    ``agent_disposed`` for the agent after it."""


@hookspec
def agent_status(agent: Agent, status: AgentStatus) -> None:
    """**notify** — an agent's status changed (``idle``, ``running``, ``disposed``)."""


@hookspec
def agent_error(agent: Agent, error: BaseException) -> None:
    """**notify** — an agent met an error outside a turn's log (a failed flush, say)."""


@hookspec
def agent_disposed(agent: Agent) -> None:
    """**notify** — an agent was disposed; its loop has exited. Once per agent, after
    ``agent_created`` (an agent whose start failed once live included)."""


# -- registration at start-up --------------------------------------------------------


@hookspec
def register_tools(register: Callable[..., None]) -> None:
    """**register** — contribute tools: call ``register(tool)`` for each one."""


@hookspec
def register_models(register: Callable[..., None]) -> None:
    """**register** — contribute model providers: call ``register(provider)`` for each."""


@hookspec
def register_settings(register: Callable[..., None]) -> None:
    """**register** — declare this plugin's config section: ``register(PydanticModel)``.

    The section in ``dsh.yml`` is named after the plugin and validated by that model, as
    is ``agents[].options.<plugin>`` (an agent's own settings for the plugin, checked
    over the section; the plugin decides how they layer).
    """


@hookspec
def register_secrets(register: Callable[..., None]) -> None:
    """**register** — declare environment variables that hold secrets:
    ``register("MY_TOKEN")``, or ``register("MY_URL", values=passwords_in)`` when only
    part of the value is secret.

    Each variable is left out of the environment of the ``bash`` tool's commands. Its
    value, or each string ``values(value)`` returns (8 characters or more), is hidden as
    ``***`` like a model API key: in every tool result before it is logged or sent to
    the model, and in log records. Values are read when the harness starts, from its
    ``env`` and the process's environment.
    """


@hookspec
def register_history_reducers(register: Callable[..., None]) -> None:
    """**register** — teach derived history about a plugin's event type:
    ``register("compact/summary", reducer)``.

    A reducer is ``reducer(history, event) -> list | None``: it may append to the
    history list it is given, or return a new list that replaces it (never change the
    given list in place otherwise). Replaying a stored log runs the same reducers, so a
    resumed session derives the same history.
    """


@hookspec
def register_commands(register: Callable[..., None]) -> None:
    """**register** — contribute ``dsh`` subcommands: call ``register(command)``."""


@hookspec
def register_chat_commands(register: Callable[..., None]) -> None:
    """**register** — contribute ``dsh chat`` slash commands: call
    ``register(chat_command)`` with a ``dsh.commands.ChatCommand`` for each. Called when
    a chat starts (not by ``dsh run`` or the library)."""
