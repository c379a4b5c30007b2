"""What dsh-compaction's hooks do, and ``compact_now`` for a manual ``/compact``.

The hookimpls themselves are thin functions in the package (``dsh_compaction``) that
import this module on first use, so that loading the plugin stays light."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Final

import anyio

from dsh import DshError, Message, ModelError, ModelRequest, RequestErrorDecision
from dsh.session import HistoryView
from dsh_compaction import _host
from dsh_compaction._check import (
    Check,
    kept_check,
    limits,
    new_check,
    overflow_limits,
    with_estimator,
)
from dsh_compaction._compact import CompactionResult, compact
from dsh_compaction._edits import rebuilt_request, same_messages
from dsh_compaction._events import END, PRUNE, START, SUMMARY, reduce_prune, reduce_summary
from dsh_compaction._fallback import REFUSALS
from dsh_compaction._settings import CompactionSettings
from dsh_compaction._state import AgentState, existing, forget, state_for
from dsh_compaction._stated import stated_window
from dsh_compaction._tokens import RequestEstimator
from dsh_compaction._warn import overflow_after_failure
from dsh_compaction._watch import watching

__all__ = [
    "agent_disposed",
    "agent_request",
    "agent_request_error",
    "agent_stopped",
    "compact_now",
    "register_history_reducers",
    "register_settings",
    "within",
]


def register_settings(register: Callable[..., None]) -> None:
    register(CompactionSettings)


def register_history_reducers(register: Callable[..., None]) -> None:
    register(SUMMARY, reduce_summary)
    register(PRUNE, reduce_prune)


def agent_disposed(agent: Any) -> None:
    forget(agent)


def within(agent: _host.Host, request: ModelRequest, turn: int, step: int) -> bool:
    """True when ``agent_request`` would return None for ``request`` at once (under the
    threshold, disabled, no window, already tried, its fixed part at the limit): the
    check of nearly every request, decided with the kept check and estimator, without a
    coroutine. False when it cannot tell (nothing kept yet) or the request is over the
    threshold and could be compacted: then ``agent_request`` decides, as if this had not
    run (the estimate is kept: asking again counts nothing anew)."""
    state = state_for(agent)
    check = kept_check(agent, state, request)
    if check is None or (estimator := check.estimator) is None:
        return False
    if _skipped(check, state, turn, step):
        return True
    built = _over(agent, check, estimator, request)
    return built is None or _fixed_over(agent, state, check, estimator, request, built)


def _skipped(check: Check, state: AgentState, turn: int, step: int) -> bool:
    """Whether this request is not compacted whatever its size (disabled, no window,
    tried this step, failed this turn)."""
    return (
        not check.enabled
        or check.window is None
        or state.failed_turn == turn
        or state.step_tried == (turn, step)
    )


def _over(
    agent: _host.Host, check: Check, estimator: RequestEstimator, request: ModelRequest
) -> Sequence[Message] | None:
    """The history ``request`` was built from when its estimate is over the limit, else
    None: its messages, unless a plugin that ran before changed them (then the history
    as it is now, which the request is measured against: only what the plugin changed is
    counted anew)."""
    sent = request.__dict__["messages"]
    if isinstance(sent, HistoryView):
        return sent if estimator.request(request) > check.limit else None
    built = agent.session.history
    return built if estimator.request(request, built) > check.limit else None


def _fixed_over(
    agent: _host.Host,
    state: AgentState,
    check: Check,
    estimator: RequestEstimator,
    request: ModelRequest,
    built: Sequence[Message],
) -> bool:
    """Whether ``request`` (over the limit, built from ``built``) is over it by its
    system prompt and tools, and the messages a plugin that ran before added to it,
    alone: no summary can bring it under the limit, and one would only lose the history
    verbatim and cost a call each step. Warned once each time it starts. Asked only of
    a request over the limit (the fixed part's count is kept by the estimator)."""
    fields = request.__dict__
    fixed = estimator.fixed(fields["system"], fields["tools"])
    limit = check.limit
    sent = fields["messages"]
    notes = 0
    if not isinstance(sent, HistoryView):
        # what the plugins' edit adds to the history, net: a message they copied or
        # replaced is history (compaction shrinks it), not a note
        notes = max(estimator.edited(sent, built)[0] - estimator.messages(built), 0)
    if fixed + notes < limit:
        state.fixed_warned = False  # compacting again: warned anew if it comes back
        return False
    assert check.window is not None  # _skipped: a request without a window is not checked
    settings = check.settings
    window, reserve = check.window, check.reserve
    state.fixed_over(
        agent.id,
        fixed,
        notes,
        limit,
        threshold=settings.threshold,
        window=window,
        reserve=reserve,
        setting=settings.context_window,
        own=check.limits[0],
    )
    return True


async def agent_request(
    agent: _host.Host, request: ModelRequest, turn: int, step: int
) -> ModelRequest | None:
    """Over the threshold, compact, then send the request rebuilt from the compacted
    history, with the change a plugin that ran before made to its messages carried over
    (``_edits``). ``tryfirst``: later impls see (and may still trim) the compacted
    request."""
    state = state_for(agent)
    check = kept_check(agent, state, request) or new_check(agent, state, request)
    if _skipped(check, state, turn, step):
        return None
    settings, window, limit = check.settings, check.window, check.limit
    assert window is not None  # _skipped: a request without a window is never compacted
    estimator = check.estimator or await with_estimator(agent, state, check, request)
    built = _over(agent, check, estimator, request)
    if built is None or _fixed_over(agent, state, check, estimator, request, built):
        return None
    reserve = check.reserve
    rebuilt = False
    async with state.lock:
        if not same_messages(agent.session.history, built):
            # a manual compaction replaced the history while this step waited
            request = rebuilt_request(agent, request, built)
            built = agent.session.history
            rebuilt = True
            if estimator.request(request, built) <= limit:
                return request
        state.step_tried = (turn, step)
        result = await compact(
            agent,
            state,
            settings,
            request,
            reason="threshold",
            window=window,
            reserve=reserve,
            turn=turn,
            step=step,
        )
    if result.error is not None:  # failed (after a too-large result's stub, perhaps)
        state.failed_turn, state.failed_error = turn, result.error
    if result.changed:
        return rebuilt_request(agent, request, built)
    return request if rebuilt else None


async def agent_request_error(
    agent: _host.Host, request: ModelRequest, error: ModelError, turn: int, step: int
) -> RequestErrorDecision | None:
    """The provider said the request does not fit: compact once and retry the step,
    planned for the window the provider's error states when it is smaller (``_stated``)."""
    if error.code != "CONTEXT_WINDOW_EXCEEDED":
        return None
    state = state_for(agent)
    settings = state.settings(agent)
    here = (turn, step)
    if not settings.enabled or state.overflow_step == here:
        return None
    failed = state.failed_error if state.step_tried == here and state.failed_turn == turn else None
    if failed is not None and failed["code"] not in REFUSALS:
        # this step's compaction failed already; the error ends the turn
        overflow_after_failure(agent.id, failed, turn, step)
        return None
    state.overflow_step = here
    async with state.lock:
        # the request as it was refused: what it holds beside the history (the notes
        # of plugins, before compaction's impl and after it) is counted and left room for
        window, reserve, configured = overflow_limits(agent, state, settings, request)
        # the window the server says the model has, when smaller, from now on
        estimated = await _estimate(agent, state, settings, request)
        window, stated = stated_window(agent, state, request, error, window, configured, estimated)
        result = await compact(
            agent,
            state,
            settings,
            request,
            reason="overflow",
            window=window,
            reserve=reserve,
            turn=turn,
            step=step,
            stated=stated,
        )
    if not result.changed:
        return None
    return RequestErrorDecision(action="retry", reason="compacted the history to fit the window")


async def _estimate(
    agent: _host.Host, state: AgentState, settings: CompactionSettings, request: ModelRequest
) -> int:
    """dsh's estimate of ``request`` (as ``_over`` measures it)."""
    estimator = await state.estimator(agent, settings, request.model)
    if isinstance(request.messages, HistoryView):
        return estimator.request(request)
    return estimator.request(request, agent.session.history)


async def compact_now(agent: Any) -> CompactionResult:
    """Compact the agent's history now, whatever its size (a manual ``/compact``).

    Summarises everything but the recent tail (the threshold and ``enabled`` do not
    apply). Safe while a turn runs: it waits for a compaction in progress, and never
    separates a tool call from its result. Between turns, the events are flushed
    at once, those of a compaction cancelled while its summary was written too (its
    ``compact/end`` says ``aborted``). Cancelled once the summary is logged, it finishes
    (its ``compact/end``, the flush) and returns: a cancellation it raises means the
    history is as it was. Disposing the agent meanwhile ends it before the final flush
    (``agent_stopped``): it returns ``aborted`` unless it had logged its result already.
    The disposal waits for it only for its grace: one that outlives it (its result
    logged after the final flush, not saved) returns ``aborted`` with ``NOT_SAVED``.
    ``agent`` is the agent or its ``AgentHandle``.
    """
    agent = getattr(agent, "agent", agent)  # an AgentHandle holds the agent
    if getattr(agent, "status", None) == "disposed":
        raise DshError(f"agent {agent.id!r} is disposed; its history cannot be compacted")
    state = state_for(agent)
    settings = state.settings(agent)
    with watching(agent):  # its disposal ends this call (``agent_stopped``)
        return await _compact_now(agent, state, settings)


async def _compact_now(
    agent: Any, state: AgentState, settings: CompactionSettings
) -> CompactionResult:
    scope, ended = anyio.CancelScope(), anyio.Event()
    state.manual[scope] = ended
    logged: int | None = None  # the events before this call's own (None: no lock yet)
    result: CompactionResult | None = None
    try:
        with scope:  # cancelled by the agent's disposal (``agent_stopped``)
            async with state.lock:
                logged = len(agent.session.events)
                request = _host.base_request(agent)
                window, reserve = limits(agent, state, settings, request)
                result = await compact(
                    agent, state, settings, request, reason="manual", window=window, reserve=reserve
                )
    finally:
        del state.manual[scope]
        try:
            if getattr(agent, "status", None) == "idle":
                with anyio.CancelScope(shield=True):
                    await _host.flush(agent)
        finally:
            ended.set()
    if result is None:
        result = _aborted(agent, logged)
    flushed = state.flushed
    if flushed is not None and len(agent.session.events) > max(flushed, logged or 0):
        # the disposal's wait was cut short: what it logged came after the final flush
        return replace(result, outcome="aborted", error=NOT_SAVED)
    return result


#: the error of a ``compact_now`` that logged its result after the final flush
NOT_SAVED: Final = {
    "code": "NOT_SAVED",
    "message": "the agent was disposed and its session saved before the compaction "
    "ended (it outlived the disposal's grace): its result was not saved",
}


def _aborted(agent: Any, logged: int | None) -> CompactionResult:
    """What a ``compact_now`` that disposal ended did: ``aborted``, with the tokens of
    its own ``compact/end``: after its ``compact/start``, logged after the first
    ``logged`` events, when it held the lock (none: 0)."""
    events = agent.session.events[logged:] if logged is not None else []
    start = next((i for i, e in enumerate(events) if e.type == START), None)
    for event in events[start:] if start is not None else []:
        if event.type == END and event.data.get("reason") == "manual":
            before, after = event.data["tokens_before"], event.data["tokens_after"]
            return CompactionResult("aborted", "manual", before, after)
    return CompactionResult("aborted", "manual", 0, 0)


async def agent_stopped(agent: Any) -> None:
    """The agent is disposed (its loop has exited; the final flush comes next): end the
    ``compact_now`` calls in flight, and wait until each has logged its ``compact/end``,
    so that the flush stores it and its caller is told the truth."""
    state = existing(agent)
    if state is None or not state.manual:
        return
    waits = list(state.manual.items())
    for scope, _ in waits:
        scope.cancel()
    try:
        for _, ended in waits:
            await ended.wait()
    finally:
        if not all(ended.is_set() for _, ended in waits):
            # cut short (the grace): the final flush comes next, before they end
            state.flushed = len(agent.session.events)
