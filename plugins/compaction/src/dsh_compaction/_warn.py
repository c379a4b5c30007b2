"""The warning a person sees (on stderr, from ``dsh run`` and ``dsh chat``) when an
automatic compaction leaves the history as it was."""

from __future__ import annotations

from dsh import get_logger
from dsh_compaction._result import error_words

__all__ = [
    "keep_all",
    "larger_window",
    "no_window",
    "overflow_after_failure",
    "warn",
    "warn_dropped",
]

#: what ends a warning of an overflow the plugin could not compact
ENDS = "the turn ends with the provider's error. /compact (dsh chat) compacts the history again"

#: what a fallback's warning says it kept, by ``warn_dropped``'s ``kept``
KEPT = {
    "previous": ", the previous summary kept",
    "in_part": ", a summary of their first part kept",
}

log = get_logger("dsh_compaction")


def _when(reason: str, where: dict[str, int]) -> str:
    """The compaction named by its reason and turn (and an overflow's step)."""
    if "turn" not in where:
        return reason
    step = f", step {where['step']}" if reason == "overflow" and "step" in where else ""
    return f"{reason}, turn {where['turn']}{step}"


def warn(
    agent_id: str,
    reason: str,
    outcome: str,
    error: dict[str, str],
    *,
    stubbed: bool,
    where: dict[str, int],
) -> None:
    """Tell the user that an automatic compaction left the history as it was (as the
    stubs of too-large tool results left it, when ``stubbed``). The turn (and the step
    of an overflow) is named: the CLI prints each distinct message once, and a failure
    at each turn must be seen at each turn."""
    when = _when(reason, where)
    if outcome == "skipped":  # overflow, nothing to compact: not a failure of the plugin
        # why, when the NOTHING message says (``_keep.nothing``: plugins' marks)
        why = error.get("message", "").partition(": ")[2]
        why = f": {why}" if why else ""
        if stubbed:
            message = "too-large tool results were stubbed, but nothing else could be compacted"
            log.warning(
                "agent %r: %s to fit the context window (%s)%s", agent_id, message, when, why
            )
            return
        log.warning(
            "agent %r: nothing could be compacted to fit the context window (%s)%s; "
            "the history is unchanged",
            agent_id,
            when,
            why,
        )
        return
    log.warning(
        "agent %r: compaction (%s) failed%s, the %shistory is unchanged: %s%s",
        agent_id,
        when,
        " after too-large tool results were stubbed" if stubbed else "",
        "rest of the " if stubbed else "",
        error_words(error),
        f"; {ENDS}" if reason == "overflow" and not stubbed else "",
    )


def overflow_after_failure(agent_id: str, error: dict[str, str], turn: int, step: int) -> None:
    """Tell the user that the request of a step whose threshold compaction failed with
    ``error`` does not fit the window: the provider's error ends the turn."""
    log.warning(
        "agent %r: the request does not fit the context window (%s), and this step's "
        "compaction (%s) failed: %s; %s",
        agent_id,
        _when("overflow", {"turn": turn, "step": step}),
        _when("threshold", {"turn": turn}),
        error_words(error),
        ENDS,
    )


def warn_dropped(
    agent_id: str,
    reason: str,
    refused: dict[str, str],
    count: int,
    *,
    kept: str | None,
    where: dict[str, int],
) -> None:
    """Tell the user that a refused summary's ``count`` messages were dropped to fit the
    context window (``_fallback``): what the agent no longer sees, and why. ``kept``:
    ``previous`` (the previous summary), ``in_part`` (a summary of their first chunks).
    The advice names the plugin that wrote the summary, if one did (``refused``'s
    ``plugin``), else the summariser model's setting."""
    plugin = refused.get("plugin")
    if plugin is None:
        advice = "A stronger summariser (compaction.model) keeps them in a summary"
    else:
        advice = f"The refused summary was written by plugin {plugin!r} (compaction_summarize)"
    log.warning(
        "agent %r: the summary was refused (%s); to fit the context window, %d older "
        "messages were dropped without a summary (%s)%s. %s",
        agent_id,
        error_words(refused),
        count,
        _when(reason, where),
        KEPT.get(kept or "", ""),
        advice,
    )


def keep_all(agent_id: str, why: str) -> None:
    """Tell the user (once per agent: ``AgentState.keep_warned``) that the requests
    are over the compaction limit and nothing is compacted: ``why``, the plugins'
    ``compaction_keep`` marks keep everything a summary would replace (``_keep.blame``).
    An overflow has nothing to compact either, and its warning says why again."""
    log.warning(
        "agent %r: the request is over the compaction limit, but nothing is compacted: %s "
        "(warned once); when the provider refuses a request as too long, the turn ends "
        "with its error",
        agent_id,
        why,
    )


def no_window(agent_id: str, model: str | None) -> None:
    """Tell the user that no context window is known for ``model``: the threshold never
    compacts its requests, only a provider's refusal of one as too long does. An INFO
    record (``dsh -v`` shows it): a local server's model often has none, and a warning
    would be printed by every ``dsh run`` with it."""
    log.info(
        "agent %r: no context window known for model %r; compaction runs only when the "
        "provider refuses a request as too long: set context_window for it in models: "
        "(or in compaction:)",
        agent_id,
        model,
    )


def larger_window(agent_id: str, model: str | None, setting: int, own: int) -> None:
    """Tell the user that the ``context_window`` setting is larger than ``model``'s own
    window (its info's: its ``models:`` entry's, or what its provider knows of it), and
    that the smaller one is planned with: the provider refuses a request past it, and
    compacting only past the setting's threshold would come too late."""
    log.warning(
        "agent %r: compaction.context_window (%s) is larger than the context window of "
        "model %r (%s); compaction plans with %s, as the provider refuses a longer "
        "request (if the model's window really is larger, set context_window in its "
        "models: entry)",
        agent_id,
        f"{setting:,}",
        model,
        f"{own:,}",
        f"{own:,}",
    )
