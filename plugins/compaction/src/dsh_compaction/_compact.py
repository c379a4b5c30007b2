"""One compaction: plan, log ``compact/start``, prune or summarise, log the change and
``compact/end``.

A compaction changes the history only through its ``compact/prune`` or
``compact/summary`` event (the reducers apply them), and only when it succeeded: a
failing or timed-out summariser, a summary that is not smaller than what it replaces,
or a history that changed meanwhile leave the history exactly as it was, and the
failure is logged in ``compact/end``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import anyio

from dsh import EventDataError, Message, ModelRequest, get_logger
from dsh.session import HistoryView
from dsh_compaction import _host
from dsh_compaction._answers import Refused
from dsh_compaction._data import spent_data, summary_data
from dsh_compaction._events import END, PRUNE, START, SUMMARY, opening_summary, summary_message
from dsh_compaction._failures import (
    Failed,
    check_summary,
    check_unchanged,
    error_of,
    failure_of,
    redacted,
)
from dsh_compaction._fallback import (
    REFUSALS,
    fallback_data,
    fallback_summary,
    summarised_before,
    unfit,
    unfit_error,
)
from dsh_compaction._keep import blame, marks, nothing
from dsh_compaction._plan import Plan, Prune, plan_compaction, too_large
from dsh_compaction._plan import tail_budget as tail_for
from dsh_compaction._result import CompactionResult, Outcome, Reason
from dsh_compaction._settings import CompactionSettings
from dsh_compaction._state import AgentState
from dsh_compaction._summarise import Spent, summarise
from dsh_compaction._tokens import RequestEstimator
from dsh_compaction._warn import keep_all, warn, warn_dropped

__all__ = ["CompactionResult", "Outcome", "Reason", "compact", "limit_for"]

log = get_logger("dsh_compaction")


def limit_for(threshold: float, window: int | None, reserve: int) -> float:
    """The most tokens a request may have before it is compacted: ``threshold`` (the
    threshold's share of the window), and below ``window`` less the output the request
    reserves, which servers count against the window. A reserve as large as the window
    is refused by the server whatever is compacted, so it is left out."""
    if window is None or reserve >= window:
        return threshold
    return min(threshold, window - reserve)


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
    stated: dict[str, Any] | None = None,
) -> CompactionResult:
    """Compact the agent's history for ``request`` (system prompt and tools count too,
    and the messages a plugin added to the request's: one whose impl ran before
    compaction's, or on an overflow, any, as the request was refused).

    Call with ``state.lock`` held. ``window`` is the context window in tokens, if known;
    ``reserve`` the output the request reserves in it. Threshold compactions that find
    nothing to compact log nothing.

    An automatic compaction first stubs the tool results too large for the window on
    their own (``compact/prune``, a compaction of its own); if the request is still
    over the limit, a second compaction prunes or summarises the stubbed history. Its
    result is then the second's, from the first's ``tokens_before``; when the second
    changes nothing it is the first's (``pruned``), with the second's ``error`` if it
    failed. ``stated``: the window a server stated, now kept (``_stated``), which
    ``compact/start`` records.
    """
    estimator = await state.estimator(agent, settings, request.model)
    history = agent.session.history
    # what the request holds beside the history (system prompt, tools, the messages a
    # plugin added: a note), which the compacted request carries too: planned without
    fixed = estimator.fixed(request.system, request.tools)
    sent = request.messages
    if not isinstance(sent, HistoryView):
        fixed += max(estimator.edited(sent, history)[0] - estimator.messages(history), 0)
    counts = list(estimator.counts(history))
    before = fixed + sum(counts)
    known = window
    if window is None or reason != "threshold":
        # overflow: the real window is smaller than the estimate; manual: compact it all
        window = before if window is None else min(window, before)
    # the summariser's window: an overflow's provider refused ``before`` tokens, a bound
    # on the window (known or not: the known one proved too large); a manual compaction's
    # history size says nothing of it, so the tail alone is planned for that size
    summariser_window = known if reason == "manual" and known is not None else window
    limit = limit_for(settings.threshold * window, known, reserve)
    # the room history has below the threshold; a tail of at most half of it leaves
    # the other half to grow into before the next compaction
    room = max(limit - fixed, 0)
    tail_budget = tail_for(settings.tail_tokens, settings.tail_ratio, window, room)
    if reason == "threshold" and tail_budget < (settings.tail_tokens or 0):
        state.tail_capped(agent.id, settings.tail_tokens, tail_budget, limit, fixed)
    where = {k: v for k, v in (("turn", turn), ("step", step)) if v is not None}
    run = _Run(
        agent,
        state,
        settings,
        request,
        reason,
        window,
        limit,
        fixed,
        tail_budget,
        estimator,
        where,
        summariser_window,
        _must_fit(reason, known, reserve),
        limit_for(math.inf, known, reserve),
        stated,
    )
    if reason == "manual" or not (
        big := too_large(history, counts, room, estimator.counter, request.tools)
    ):
        return await run.once(history, counts)
    await run.start(history, before)
    stubbed = await run.end(history, before, await _prune(big, agent.session.emit, state))
    if stubbed.tokens_after <= limit:
        return stubbed
    history = agent.session.history
    rest = await replace(run, stubbed=True).once(history, list(estimator.counts(history)))
    if rest.changed:
        return replace(rest, tokens_before=before)
    return replace(stubbed, error=rest.error if rest.outcome == "failed" else None)


def _must_fit(reason: Reason, known: int | None, reserve: int) -> float:
    """``_Run.must_fit``: an overflow's request was refused; a threshold one past the
    window less the output reserve would be; a manual one's is not being sent."""
    if reason == "manual":
        return math.inf
    return 0.0 if reason == "overflow" else limit_for(math.inf, known, reserve)


@dataclass(frozen=True, slots=True)
class _Run:
    """What the compactions of one ``compact`` call share."""

    agent: _host.Host
    state: AgentState
    settings: CompactionSettings
    request: ModelRequest
    reason: Reason
    window: int
    limit: float
    fixed: int
    tail_budget: int
    estimator: RequestEstimator
    where: dict[str, int]
    summariser_window: int | None  # the summariser's (``window`` plans the tail)
    #: a request over this many tokens must shrink to be sent: a refused summary falls
    #: back to dropping what it would have covered (``_fallback``)
    must_fit: float
    #: the most tokens a request may have to be sent: the known window less the output
    #: reserve (inf: unknown); a fallback whose request would not fit drops nothing
    fits: float
    stated: dict[str, Any] | None  # ``compact``'s
    stubbed: bool = False  # a compaction of this call stubbed too-large results already

    async def start(self, history: Sequence[Message], before: int) -> None:
        data: dict[str, Any] = {"reason": self.reason, "tokens": before}
        data |= {"context_window": self.window, **self.where}
        data |= {"threshold": self.settings.threshold, "messages": len(history)}
        if self.stated is not None:
            data["stated"] = self.stated
        await self.agent.session.emit(START, data)

    async def end(
        self,
        history: Sequence[Message],
        before: int,
        outcome: Outcome,
        error: dict[str, str] | None = None,
        refused: dict[str, str] | None = None,
        spent: Spent | None = None,
    ) -> CompactionResult:
        """Log ``compact/end``; ``spent``: the summariser's calls of a compaction that
        logged no ``compact/summary`` to carry them."""
        now = self.agent.session.history
        after = self.fixed + self.estimator.messages(now)
        reason = self.reason
        data: dict[str, Any] = {"reason": reason, "outcome": outcome, **self.where}
        data |= {"tokens_before": before, "tokens_after": after}
        data |= {"messages_before": len(history), "messages_after": len(now)}
        if error is not None:
            # a summariser's failure may quote a model API key: the session keeps none
            data["error"] = error = redacted(error)
            if reason != "manual":  # a manual one is answered by its caller (/compact)
                warn(self.agent.id, reason, outcome, error, stubbed=self.stubbed, where=self.where)
        if refused is not None:  # redacted by ``fallback``
            data["refused"] = refused
        data |= spent_data(spent)
        await self.agent.session.emit(END, data)
        return CompactionResult(outcome, reason, before, after, error, refused=refused)

    async def once(self, history: Sequence[Message], counts: Sequence[int]) -> CompactionResult:
        """One compaction of the agent's ``history`` as it is now (its per-message token
        ``counts``, a copy): plan, then prune or summarise."""
        agent, state, settings, reason = self.agent, self.state, self.settings, self.reason
        tail_budget = self.tail_budget
        before = self.fixed + sum(counts)
        room = max(self.limit - self.fixed, 0)
        counter = self.estimator.counter
        try:
            logged = opening_summary(history, state.summary)  # None: no summary
            first = int(logged is not None)
            task, keep = await marks(agent, state, settings, history, counts, tail_budget, first)

            def planned(keep: frozenset[int]) -> Plan | None:
                return plan_compaction(
                    history,
                    counts,
                    tail_budget=tail_budget,
                    keep=keep,
                    charged=keep,
                    prune_chars=settings.prune_chars,
                    counter=counter,
                    summary=logged,
                )

            plan = planned(keep)
            # nothing to compact for the plugins' marks alone: they are why (a threshold
            # one asks until it has warned, once per agent)
            why = None
            if plan is None and keep != task and (reason != "threshold" or not state.keep_warned):
                why = blame(agent) if planned(task) is not None else None
        except Exception as exc:
            await self.start(history, before)
            return await self.end(history, before, "failed", failure_of(agent, exc, settings))
        if plan is None:
            if reason == "threshold":
                if why is not None:
                    state.keep_warned = True
                    keep_all(agent.id, why)
                log.debug("agent %r: over the threshold, but nothing to compact", agent.id)
                return CompactionResult("skipped", reason, before, before)
            if reason == "manual" and not history:
                # a /compact before any turn: logging it would make a session of nothing
                # but the skip, stored and then taken by --continue as the last one
                return CompactionResult("skipped", reason, before, before, nothing(why))
            await self.start(history, before)
            return await self.end(history, before, "skipped", nothing(why))

        # pruning alone is enough when it leaves the request a quarter of the room below
        # the threshold (else the next steps would prune again and again)
        alone = bool(plan.prune) and before - plan.prune_saves <= self.limit - room / 4
        # even an empty summary leaves the request over the limit: summarising at each
        # step would only lose history (left to the overflow path, warned once)
        floor = before - plan.replaced_tokens + plan.empty
        if reason == "threshold" and not alone:
            if floor > self.limit:
                state.kept_full(agent.id, floor, self.limit)
                return CompactionResult("skipped", reason, before, before)
            state.kept_full_warned = False
        await self.start(history, before)
        if alone and reason != "manual":
            return await self.end(
                history, before, await _prune(plan.prune, agent.session.emit, state)
            )
        # what the summary leaves whole (a manual one's room is the history's size)
        kept = sum(counts[i] for i in keep | set(plan.opening) if 0 <= i < len(counts))
        if kept > room / 2 and reason != "manual":
            state.kept_over(agent.id, kept, room)
        spent = Spent()
        try:
            with anyio.fail_after(settings.timeout):
                summary = await summarise(
                    agent,
                    settings,
                    [history[i] for i in plan.summarised],
                    plan.previous,
                    model_name=self.request.model,
                    counter=counter,
                    window=self.summariser_window,
                    spent=spent,
                    refused=self.window if reason == "overflow" else None,
                )
            check_summary(summary, plan, counter.count_message(summary_message(summary.text)))
            check_unchanged(history, agent.session.history, plan.cut)
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                await self.end(history, before, "aborted", spent=spent)
            raise
        except Exception as exc:
            error = failure_of(agent, exc, settings)
            if error["code"] in REFUSALS and before > self.must_fit:
                return await self.fallback(history, before, plan, error, exc, spent)
            return await self.end(history, before, "failed", error, spent=spent)
        try:
            await agent.session.emit(SUMMARY, summary_data(summary, plan, spent))
        except EventDataError as exc:  # refused before it entered the log: nothing changed
            error = error_of(exc, settings)
            return await self.end(history, before, "failed", error, spent=spent)
        state.summary = summary.text
        state.invalidate()
        result = await self.end(history, before, "summarized")
        return CompactionResult(
            result.outcome,
            reason,
            before,
            result.tokens_after,
            summary=summary.text,
            truncated=summary.truncated,
        )

    async def fallback(
        self,
        history: Sequence[Message],
        before: int,
        plan: Plan,
        refused: dict[str, str],
        exc: Exception,
        spent: Spent,
    ) -> CompactionResult:
        """Drop what the summary ``exc`` refused would have covered, keeping the previous
        one or the chunks' before it (``_fallback``). Failed (the history unchanged) when
        the request would not fit even then, or be no smaller (the refusal is the error),
        or when the history changed meanwhile (``refused`` beside that error)."""
        refused, count = redacted(refused), len(plan.summarised)
        so_far = exc.so_far if isinstance(exc, Refused) else None
        text = fallback_summary(plan.previous, so_far, count, refused["code"])
        tokens = self.estimator.counter.count_message(summary_message(text))
        if unfit(before - plan.replaced_tokens + tokens, before, self.fits):
            return await self.end(history, before, "failed", unfit_error(refused), spent=spent)
        try:
            check_unchanged(history, self.agent.session.history, plan.cut)
            data = fallback_data(plan, text, refused) | spent_data(spent)
            await self.agent.session.emit(SUMMARY, data)
        except (Failed, EventDataError) as failure:
            error = error_of(failure, self.settings)
            return await self.end(history, before, "failed", error, refused, spent)
        self.state.summary = text
        self.state.invalidate()
        kept = "in_part" if so_far else "previous" if summarised_before(plan.previous) else None
        warn_dropped(self.agent.id, self.reason, refused, count, kept=kept, where=self.where)
        return await self.end(history, before, "dropped", refused=refused)


async def _prune(prune: Sequence[Prune], emit: Any, state: AgentState) -> Outcome:
    """Log ``compact/prune`` for ``prune`` (its reducer stubs the results)."""
    pruned = [{"index": p.index, "call_id": p.call_id, "content": p.stub} for p in prune]
    await emit(PRUNE, {"pruned": pruned, "tokens_saved": sum(p.saves for p in prune)})
    state.invalidate()
    return "pruned"
