"""Per-agent state: resolved settings, the incremental estimator, the compaction lock
and the bookkeeping that keeps automatic compaction from hammering a failing
summariser.

Nothing here is the source of truth: it is a cache of what the session log and the
settings determine, rebuilt from scratch for a resumed agent.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio

from dsh import DshError, get_logger
from dsh_compaction import _host
from dsh_compaction._counters import counter_for
from dsh_compaction._events import logged_summary
from dsh_compaction._settings import CompactionSettings, layer_settings
from dsh_compaction._stated import logged_windows
from dsh_compaction._task import TurnTask
from dsh_compaction._tokens import RequestEstimator

if TYPE_CHECKING:
    from dsh.llm import Model
    from dsh_compaction._check import Check

__all__ = ["AgentState", "existing", "forget", "state_for"]

log = get_logger("dsh_compaction")


class AgentState:
    __slots__ = (
        "_estimators",
        "_model",
        "_section",
        "_settings",
        "_settings_key",
        "check",
        "failed_error",
        "failed_turn",
        "fixed_warned",
        "flushed",
        "keep_warned",
        "kept_full_warned",
        "kept_warned",
        "lock",
        "manual",
        "overflow_step",
        "step_tried",
        "summary",
        "tail_warned",
        "turn_task",
        "window_warned",
        "windowless",
        "windows",
    )

    def __init__(self) -> None:
        #: one compaction at a time per agent (automatic ones and ``compact_now``)
        self.lock = anyio.Lock()
        #: the ``compact_now`` calls in flight: each one's cancel scope, and the event
        #: set once it has ended (its ``compact/end`` logged): disposal ends them first
        self.manual: dict[anyio.CancelScope, anyio.Event] = {}
        #: the events logged when the disposal's wait for them was cut short (its
        #: grace ran out): the final flush stored no more (``compact_now`` says so)
        self.flushed: int | None = None
        #: the turn in which an automatic compaction failed: no more threshold
        #: attempts in that turn (a broken summariser would cost its timeout each step)
        self.failed_turn: int | None = None
        #: (turn, step) of the last automatic attempt and of the last overflow retry
        self.step_tried: tuple[int, int] | None = None
        self.overflow_step: tuple[int, int] | None = None
        #: why that compaction failed: an overflow of its step names it, or, when the
        #: summary was refused (``_fallback.REFUSALS``), asks the summariser once more
        self.failed_error: dict[str, str] | None = None
        #: the warning that ``tail_tokens`` is capped was logged (once per agent)
        self.tail_warned = False
        #: the warning that the kept messages take most of the room was logged (once)
        self.kept_warned = False
        #: the warning that what a summary keeps verbatim cannot get under the limit was
        #: logged (and no threshold compaction has summarised since: ``_compact``)
        self.kept_full_warned = False
        #: the warning that compaction_keep marks leave nothing to compact was logged
        self.keep_warned = False
        #: the warning that the request's fixed part reaches the limit was logged (and
        #: compaction has not resumed since: ``_plugin._fixed_over``)
        self.fixed_warned = False
        #: the latest turn's prompts and steering, read from the log incrementally
        self.turn_task = TurnTask()
        #: the text of the latest ``compact/summary`` logged (read from the log as the
        #: state is made, then set by each one compaction logs): the summary a history
        #: opens with is this one's message, not a prompt starting with the header
        self.summary: str | None = None
        #: the threshold check's values, kept while what they derive from is the same
        #: (``_check``)
        self.check: Check | None = None
        #: the context windows servers stated, per model name, smaller than the one
        #: configured: the threshold check plans with them (``_stated``)
        self.windows: dict[str | None, int] = {}
        #: the models no context window is known for, warned about (``_warn.no_window``)
        self.windowless: set[str | None] = set()
        #: the models whose own window is smaller than the ``context_window`` setting,
        #: warned about (``_warn.larger_window``)
        self.window_warned: set[str | None] = set()
        self._settings_key: tuple[object, object] | None = None
        self._settings: CompactionSettings | None = None
        #: (the harness's config, its ``compaction:`` section): the section is looked
        #: up again only when the harness loads another config
        self._section: tuple[object, CompactionSettings | None] | None = None
        #: (model registry, model name, the model found): a registry only adds models,
        #: and never twice under one name, so a model found stays the one found (a
        #: name not found is looked up again: a plugin may register it later)
        self._model: tuple[object, str, Model] | None = None
        #: one per model (and characters per token) the agent has used: an agent that
        #: switches models keeps each model's counter and counts
        self._estimators: dict[tuple[str | None, float], RequestEstimator] = {}

    def settings(self, agent: _host.Host) -> CompactionSettings:
        """Defaults < the harness's ``compaction:`` section < the agent option."""
        base = self._harness_section(agent)
        override = agent.options.get("compaction")
        key = (base, override)
        cached = self._settings_key
        if (
            self._settings is None
            or cached is None
            or not (cached[0] is key[0] and cached[1] is key[1])
        ):
            self._settings = layer_settings(agent.id, base, override)
            self._settings_key = key
        return self._settings

    def _harness_section(self, agent: _host.Host) -> CompactionSettings | None:
        """``_host.harness_section(agent)``, kept while the harness's config is the
        same object (the section is part of it; a reload makes a new one)."""
        harness = getattr(agent, "harness", None)
        if harness is None:
            return None
        try:
            config = harness.config
        except DshError:  # not started: no config to keep it by
            return _host.harness_section(agent)
        cached = self._section
        if cached is not None and cached[0] is config:
            return cached[1]
        section = _host.harness_section(agent)
        self._section = (config, section)
        return section

    def model(self, agent: _host.Host, name: str | None) -> Model | None:
        """``_host.find_model(agent, name)``, kept per registry and name once found."""
        harness = getattr(agent, "harness", None)
        models = harness.models if harness is not None else None
        name = name or agent.options.get("model")
        cached = self._model
        if cached is not None and cached[0] is models and cached[1] == name:
            return cached[2]
        found = _host.find_model(agent, name)
        if found is not None and name is not None:
            self._model = (models, name, found)
        return found

    async def estimator(
        self, agent: _host.Host, settings: CompactionSettings, model: str | None
    ) -> RequestEstimator:
        """The estimator for ``model`` (a counter from ``compaction_token_counter``, or
        the heuristic)."""
        key = (model, settings.chars_per_token)
        estimator = self._estimators.get(key)
        if estimator is None:
            counter = await counter_for(agent, settings, model)
            estimator = self._estimators.setdefault(key, RequestEstimator(counter))
        return estimator

    def tail_capped(
        self, agent_id: str, tail_tokens: int | None, budget: int, limit: float, fixed: int
    ) -> None:
        """Warn, once per agent, that ``tail_tokens`` is capped at ``budget``: half the
        room below the ``limit`` of the known window, less the request's ``fixed`` part
        (it holds for every compaction after)."""
        if not self.tail_warned:
            self.tail_warned = True
            log.warning(
                "agent %r: tail_tokens (%s) is more than half the room below the "
                "compaction limit (~%s tokens: the limit %s less ~%s for the system prompt, "
                "the tools and the messages plugins add); the tail kept verbatim is capped "
                "at ~%s tokens",
                agent_id,
                tail_tokens,
                f"{max(limit - fixed, 0):,.0f}",
                f"{limit:,.0f}",
                f"{fixed:,}",
                f"{budget:,}",
            )

    def kept_over(self, agent_id: str, kept: int, room: float) -> None:
        """Warn, once per agent, that the messages kept verbatim (``kept`` tokens: the
        turn's task, its first step kept for its reasoning, and what ``compaction_keep``
        marks) take more than half the ``room``
        below the limit: each compaction leaves them, and the last step, less than half
        the room to grow into, so compactions (summariser calls) come every few steps."""
        if not self.kept_warned:
            self.kept_warned = True
            log.warning(
                "agent %r: the messages kept verbatim (the turn's task, its first step "
                "when kept for its reasoning, and those compaction_keep marks: ~%s tokens) "
                "take more than half the room below the "
                "compaction limit (~%s tokens); each compaction keeps them whole and leaves "
                "less than half the room to grow into, so the history is summarised every "
                "few steps (each a summariser call): keep less, or use a larger window",
                agent_id,
                f"{kept:,}",
                f"{room:,.0f}",
            )

    def kept_full(self, agent_id: str, floor: int, limit: float) -> None:
        """Warn, once until a threshold compaction summarises again, that the request
        would stay over the ``limit`` with the history summarised (``floor`` tokens with
        an empty summary: the messages kept verbatim, the tail and the fixed part)."""
        if self.kept_full_warned:
            return
        self.kept_full_warned = True
        log.warning(
            "agent %r: what a summary keeps verbatim (the request's fixed part, the turn's "
            "task, its first step when kept for its reasoning, those compaction_keep marks "
            "and the recent tail: ~%s tokens) cannot get under the compaction limit (%s): "
            "compaction does not summarise at the threshold, only when the provider "
            "refuses a request as too long; keep less, or use a larger window",
            agent_id,
            f"{floor:,}",
            f"{limit:,.0f}",
        )

    def fixed_over(
        self,
        agent_id: str,
        fixed: int,
        notes: int,
        limit: float,
        *,
        threshold: float,
        window: int,
        reserve: int,
        setting: int | None,
        own: int | None,
    ) -> None:
        """Warn, once until compaction resumes, that the request's system prompt and
        tools (``fixed``), with the messages plugins add to it (``notes``), reach the
        compaction ``limit`` (of ``threshold``, the ``window`` and the output the
        request ``reserve``s, as ``_compact.limit_for`` derives it) on their own: no
        summary can help. What to change is only what would raise the limit above
        them: the threshold and the reserve only when they are under the window; the
        ``context_window`` ``setting`` only when it is the window and below the model's
        ``own`` (a larger one is not used)."""
        if self.fixed_warned:
            return
        self.fixed_warned = True
        what = "the system prompt and tools"
        if notes:
            what = "the system prompt, the tools and the messages plugins add to the request"
        total = fixed + notes
        # what keeps the limit at or below them: the threshold's share, the reserve
        share = "raise threshold" if threshold * window <= total else None
        output = "lower max_tokens" if reserve < window and window - reserve <= total else None
        if reserve < window and window - reserve < threshold * window:
            how = f"context_window {window:,} less the {reserve:,} tokens of output"
            how += " the request reserves"
            needed = [output, share]
        else:
            how = f"threshold {threshold:g} of context_window {window:,}"
            needed = [share, output]
        changes = []
        if total < window:  # else only a larger window helps
            changes.append(" and ".join(n for n in needed if n is not None))
        if window != setting or (own is not None and own <= window):
            changes.append("use a model with a larger window")
        elif own is not None:
            changes.append(f"raise context_window ({window:,}) up to the model's window ({own:,})")
        else:
            changes.append(f"raise context_window ({window:,}) if the model's window is larger")
        log.warning(
            "agent %r: %s (~%s tokens) already reach the compaction limit (%s = %s): no "
            "summary of the history can bring a request under it, so compaction does not "
            "summarise at the threshold, only when the provider refuses a request as too "
            "long; %s, or make them smaller",
            agent_id,
            what,
            f"{fixed + notes:,}",
            f"{limit:,.0f}",
            how,
            ", ".join(changes),
        )

    def invalidate(self) -> None:
        """The history was replaced: forget the counts."""
        for estimator in self._estimators.values():
            estimator.invalidate()


#: id(agent) -> (the agent's weak reference, or for an agent that takes none a function
#: that returns it, its state): a dict lookup and a call per request, where a
#: WeakKeyDictionary builds a weak reference on every lookup
_states: dict[int, tuple[Callable[[], Any], AgentState]] = {}


def state_for(agent: Any) -> AgentState:
    entry = _states.get(id(agent))
    if entry is not None and entry[0]() is agent:
        return entry[1]
    return _add(agent)


def _add(agent: Any) -> AgentState:
    key = id(agent)
    state = AgentState()
    # a resumed or forked session: the windows servers stated before (once per agent)
    session = getattr(agent, "session", None)
    if session is not None:
        state.windows.update(logged_windows(session.events))
        state.summary = logged_summary(session.events)
    ref: Callable[[], Any]
    try:
        ref = weakref.ref(agent, lambda dead: _drop(key, dead))
    except TypeError:  # an agent that takes no weak reference: kept until forgotten
        ref = lambda: agent  # noqa: E731
    _states[key] = (ref, state)
    return state


def _drop(key: int, ref: object) -> None:
    """The agent behind ``ref`` is gone: forget its state (unless another agent that
    reuses its id has one by now)."""
    entry = _states.get(key)
    if entry is not None and entry[0] is ref:
        del _states[key]


def existing(agent: Any) -> AgentState | None:
    """The agent's state, if it has one (None: nothing of it was ever compacted)."""
    entry = _states.get(id(agent))
    return entry[1] if entry is not None and entry[0]() is agent else None


def forget(agent: Any) -> None:
    if existing(agent) is not None:
        del _states[id(agent)]
