"""One compaction: plan, log ``compact/start``, prune or summarise, log the change and
``compact/end``.

A compaction changes the history only through its ``compact/prune`` or
``compact/summary`` event (the reducers apply them), and only when it succeeded: a
failing or timed-out summariser, a summary that is not smaller than what it replaces,
or a history that changed meanwhile leave the history exactly as it was, and the
failure is logged in ``compact/end``.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import anyio

from dsh import DshError, EventDataError, HookError, Message, ModelError, ModelRequest, get_logger
from dsh_compaction import _host
from dsh_compaction._events import END, PRUNE, START, SUMMARY, summary_message
from dsh_compaction._plan import Plan, Prune, last_user_message, plan_compaction, too_large
from dsh_compaction._settings import CompactionSettings
from dsh_compaction._state import AgentState
from dsh_compaction._summarise import Summary, summarise

__all__ = ["CompactionResult", "Outcome", "Reason", "compact", "limit_for"]

log = get_logger("dsh_compaction")

Reason = Literal["threshold", "overflow", "manual"]
Outcome = Literal["summarized", "pruned", "skipped", "failed", "aborted"]


@dataclass(frozen=True, slots=True)
class CompactionResult:
    """What a compaction did; ``changed`` when the history was compacted."""

    outcome: Outcome
    reason: Reason
    tokens_before: int
    tokens_after: int
    error: dict[str, str] | None = None
    summary: str | None = None

    @property
    def changed(self) -> bool:
        return self.outcome in ("summarized", "pruned")

    def __str__(self) -> str:
        """One sentence for a person (chat's ``/compact`` prints it)."""
        tokens = f"~{self.tokens_before:,} -> ~{self.tokens_after:,} tokens"
        if self.outcome == "summarized":
            return f"the history was summarized ({tokens})"
        if self.outcome == "pruned":
            return f"old tool results were pruned ({tokens})"
        if self.outcome == "skipped":
            return f"nothing to compact (~{self.tokens_before:,} tokens)"
        if self.outcome == "aborted":
            return "aborted; the history is unchanged"
        error = self.error or {}
        why = f"{error.get('code', 'UNKNOWN')}: {error.get('message', '')}"
        return f"failed, the history is unchanged ({why})"


def limit_for(threshold: float, window: int | None, reserve: int) -> float:
    """The most tokens a request may have before it is compacted: ``threshold`` (the
    threshold's share of the window), and below ``window`` less the output the request
    reserves, which servers count against the window. A reserve as large as the window
    is refused by the server whatever is compacted, so it is left out."""
    if window is None or reserve >= window:
        return threshold
    return min(threshold, window - reserve)


class _Failed(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.error = {"code": code, "message": message}


async def _marks(
    agent: _host.Host,
    settings: CompactionSettings,
    history: Sequence[Message],
    counts: Sequence[int],
    tail_budget: int,
) -> frozenset[int]:
    keep: set[int] = set()
    if settings.keep_last_user_message:
        latest = last_user_message(history)
        if latest is not None and counts[latest] <= tail_budget:
            keep.add(latest)
    marked = await _host.call_waterfall(
        agent, "compaction_keep", "keep", messages=history, keep=frozenset(keep)
    )
    if not isinstance(marked, Collection) or not all(isinstance(i, int) for i in marked):
        raise DshError(f"compaction_keep returned {marked!r}, not a collection of indices")
    return frozenset(marked)


def _error(exc: BaseException, settings: CompactionSettings) -> dict[str, str]:
    if isinstance(exc, _Failed):
        return exc.error
    if isinstance(exc, TimeoutError):
        message = f"the summary took longer than the timeout ({settings.timeout:g} s)"
        return {"code": "TIMEOUT", "message": message}
    if isinstance(exc, HookError):
        return {"code": exc.code, "message": str(exc), "plugin": exc.plugin}
    if isinstance(exc, ModelError):
        return {"code": exc.code, "message": exc.message}
    if isinstance(exc, DshError):
        return {"code": exc.code, "message": str(exc)}
    log.exception("compaction failed")
    return {"code": "INTERNAL", "message": f"{type(exc).__name__}: {exc}"}


async def compact(
    agent: _host.Host,
    state: AgentState,
    settings: CompactionSettings,
    request: ModelRequest,
    *,
    reason: Reason,
    window: int | None,
    reserve: int = 0,
    turn: int | None = None,
    step: int | None = None,
) -> CompactionResult:
    """Compact the agent's history for ``request`` (system prompt and tools count too).

    Call with ``state.lock`` held. ``window`` is the context window in tokens, if known;
    ``reserve`` the output the request reserves in it. Threshold compactions that find
    nothing to compact log nothing.
    """
    session = agent.session
    emit = session.emit
    estimator = await state.estimator(agent, settings, request.model)
    history = session.history
    fixed = estimator.fixed(request.system, request.tools)
    counts = list(estimator.counts(history))
    before = fixed + sum(counts)
    known = window
    if window is None or reason != "threshold":
        # overflow: the real window is smaller than the estimate; manual: compact what
        # there is, however far from the window it is
        window = before if window is None else min(window, before)
    limit = limit_for(settings.threshold * window, known, reserve)
    # the room history has below the threshold; a tail of at most half of it leaves
    # the other half to grow into before the next compaction
    room = max(limit - fixed, 0)
    tail_budget = settings.tail_tokens or int(min(settings.tail_ratio * window, room / 2))
    where = {k: v for k, v in (("turn", turn), ("step", step)) if v is not None}
    start: dict[str, Any] = {"reason": reason, "tokens": before, "context_window": window}
    start |= {**where, "threshold": settings.threshold, "messages": len(history)}

    async def end(outcome: Outcome, error: dict[str, str] | None = None) -> CompactionResult:
        after = fixed + estimator.messages(session.history)
        data: dict[str, Any] = {"reason": reason, "outcome": outcome, **where}
        data |= {"tokens_before": before, "tokens_after": after}
        data |= {"messages_before": len(history), "messages_after": len(session.history)}
        if error is not None:
            data["error"] = error
            if reason != "manual":  # a manual one is answered by its caller (/compact)
                log.warning(
                    "agent %r: compaction (%s) failed, the history is unchanged: %s: %s",
                    agent.id,
                    reason,
                    error.get("code"),
                    error.get("message"),
                )
        await emit(END, data)
        return CompactionResult(outcome, reason, before, after, error)

    if reason != "manual" and (big := too_large(history, counts, room, estimator.counter)):
        await emit(START, start)
        return await end(await _prune(big, emit, state))
    try:
        keep = await _marks(agent, settings, history, counts, tail_budget)
        plan = plan_compaction(
            history,
            counts,
            tail_budget=tail_budget,
            keep=keep,
            prune_chars=settings.prune_chars,
            counter=estimator.counter,
        )
    except Exception as exc:
        await emit(START, start)
        return await end("failed", _error(exc, settings))
    if plan is None:
        if reason == "threshold":
            log.debug("agent %r: over the threshold, but nothing to compact", agent.id)
            return CompactionResult("skipped", reason, before, before)
        await emit(START, start)
        return await end("skipped", {"code": "NOTHING", "message": "nothing to compact"})

    await emit(START, start)
    # pruning alone is enough when it leaves the request a quarter of the room below the
    # threshold (else the next steps would prune again and again)
    if plan.prune and reason != "manual" and before - plan.prune_saves <= limit - room / 4:
        return await end(await _prune(plan.prune, emit, state))
    try:
        with anyio.fail_after(settings.timeout):
            summary = await summarise(
                agent,
                settings,
                [history[i] for i in plan.summarised],
                plan.previous,
                model_name=request.model,
                counter=estimator.counter,
                window=window,
            )
        _check(summary, plan, estimator.counter.count_message(summary_message(summary.text)))
        _check_unchanged(history, session.history, plan.cut)
    except anyio.get_cancelled_exc_class():
        with anyio.CancelScope(shield=True):
            await end("aborted")
        raise
    except Exception as exc:
        return await end("failed", _error(exc, settings))
    try:
        await emit(SUMMARY, _summary_data(summary, plan))
    except EventDataError as exc:  # refused before it entered the log: nothing changed
        return await end("failed", _error(exc, settings))
    state.invalidate()
    result = await end("summarized")
    return CompactionResult(
        result.outcome, reason, before, result.tokens_after, summary=summary.text
    )


async def _prune(prune: Sequence[Prune], emit: Any, state: AgentState) -> Outcome:
    """Log ``compact/prune`` for ``prune`` (its reducer stubs the results)."""
    pruned = [{"index": p.index, "call_id": p.call_id, "content": p.stub} for p in prune]
    await emit(PRUNE, {"pruned": pruned, "tokens_saved": sum(p.saves for p in prune)})
    state.invalidate()
    return "pruned"


def _check(summary: Summary, plan: Plan, tokens: int) -> None:
    if not summary.text:
        raise _Failed("EMPTY_SUMMARY", f"the summariser ({summary.source}) wrote nothing")
    if tokens >= plan.replaced_tokens:
        raise _Failed(
            "SUMMARY_NOT_SMALLER",
            f"the summary ({tokens} tokens) is not smaller than the "
            f"{plan.replaced_tokens} tokens it would replace",
        )


def _check_unchanged(planned: Sequence[Message], now: Sequence[Message], cut: int) -> None:
    if len(now) < cut or any(now[i] is not planned[i] for i in range(cut)):
        raise _Failed("HISTORY_CHANGED", "the history changed while the summary was written")


def _summary_data(summary: Summary, plan: Plan) -> dict[str, Any]:
    data: dict[str, Any] = {
        "summary": summary.text,
        "replaces": plan.cut,
        "kept": list(plan.kept),
        "summarised": len(plan.summarised),
        "merged_previous": plan.previous is not None,
        "source": summary.source,
    }
    if summary.source == "model":
        data["model"] = summary.model
        data["calls"] = summary.calls
        data["truncated"] = summary.truncated
        data["usage"] = summary.usage.model_dump()
    return data
