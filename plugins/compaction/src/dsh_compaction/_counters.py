"""The token counter an agent's estimator counts with: the one a plugin's
``compaction_token_counter`` gives for a model, guarded (``_guarded``), else the
heuristic."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from dsh import HookError, get_logger
from dsh_compaction import _host
from dsh_compaction._guarded import GuardedCounter, OnFailure
from dsh_compaction._settings import CompactionSettings
from dsh_compaction._tokens import HeuristicCounter, TokenCounter
from dsh_compaction._told import first_time

__all__ = ["counter_for"]

log = get_logger("dsh_compaction")


async def counter_for(agent: _host.Host, settings: CompactionSettings, model: str | None) -> Any:
    """The counter a plugin's ``compaction_token_counter`` gives for ``model``, guarded
    (``_guarded``: a count it fails to make is the heuristic's); the heuristic when none
    answers, and (with a warning naming the plugin, the impl's failure reported as dsh
    reports one it contains) when the one that answered failed or gave something other
    than a ``TokenCounter``."""
    hook = "compaction_token_counter"
    try:
        answered = await _host.call_first_named(agent, hook, model=model)
    except HookError as error:
        _host.report(agent, error)
        log.warning(
            "agent %r: %s of plugin %r failed, counting with the heuristic: %s",
            agent.id,
            hook,
            error.plugin,
            error,
        )
        answered = None
    if answered is None:
        return HeuristicCounter(settings.chars_per_token)
    plugin, counter = answered
    if not isinstance(counter, TokenCounter):
        wrong = TypeError(f"returned {type(counter).__name__}, not a TokenCounter")
        _host.report(agent, _host.wrong_result(agent, hook, plugin, wrong))
        log.warning(
            "agent %r: %s of plugin %r returned %r, not a TokenCounter; counting with the "
            "heuristic",
            agent.id,
            hook,
            plugin,
            counter,
        )
        return HeuristicCounter(settings.chars_per_token)
    heuristic = HeuristicCounter(settings.chars_per_token)
    return GuardedCounter(counter, heuristic, _counter_failed(agent, hook, plugin))


def _counter_failed(agent: _host.Host, hook: str, plugin: str) -> OnFailure:
    """What a guarded counter of ``plugin`` does at its first failure: warn, and report
    it as the failure of the impl that supplied it, unless it was told for another agent
    of the harness (``_told``). The agent is held by a weak reference (the estimators
    live as long as its state)."""
    ref: Callable[[], Any]
    try:
        ref = weakref.ref(agent)
    except TypeError:  # an agent that takes no weak reference
        ref = lambda: agent  # noqa: E731
    agent_id = agent.id

    def failed(method: str, did: str, error: Exception) -> None:
        host = ref()
        if not first_time(getattr(host, "harness", None), plugin):
            return  # told for another agent of the harness
        log.warning(
            "agent %r: the token counter of plugin %r (%s) %s in %s; counting with the "
            "heuristic each time it fails (warned once, for every agent of the harness)",
            agent_id,
            plugin,
            hook,
            did,
            method,
        )
        if host is not None:
            _host.report(host, _host.wrong_result(host, hook, plugin, error))

    return failed
