"""The warning a person sees (on stderr, from ``dsh run`` and ``dsh chat``) when an
automatic compaction leaves the history as it was."""

from __future__ import annotations

from dsh import get_logger

__all__ = ["warn"]

log = get_logger("dsh_compaction")


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
    when = reason
    if "turn" in where:
        step = f", step {where['step']}" if reason == "overflow" and "step" in where else ""
        when = f"{reason}, turn {where['turn']}{step}"
    if outcome == "skipped":  # overflow, nothing to compact: not a failure of the plugin
        if stubbed:
            message = "too-large tool results were stubbed, but nothing else could be compacted"
            log.warning("agent %r: %s to fit the context window (%s)", agent_id, message, when)
            return
        log.warning(
            "agent %r: nothing could be compacted to fit the context window (%s); "
            "the history is unchanged",
            agent_id,
            when,
        )
        return
    log.warning(
        "agent %r: compaction (%s) failed%s, the %shistory is unchanged: %s: %s",
        agent_id,
        when,
        " after too-large tool results were stubbed" if stubbed else "",
        "rest of the " if stubbed else "",
        error.get("code"),
        error.get("message"),
    )
