"""The fallback of a refused summary when the request must shrink to fit the window.

A summary the plugin refuses (``REFUSALS``: a weak model answered the transcript, copied
it, or echoed its instructions) leaves the history as it was, and the next turn tries
again. But when the request is over the context window itself (an overflow, or a
threshold check that finds it past the window less the output reserve), leaving the
history as it was ends the turn with the provider's error, and every later turn too.
Then the messages the summary would have covered are dropped instead: the previous
summary is kept, followed by a note of what was dropped and why, the kept messages and
the tail. It is logged as a ``compact/summary`` (``source: fallback``, the refusal in
``refused``), so the reducer derives it from the log like any summary.

Messages are dropped only when that lets the request be sent: the request after
dropping (its estimate) must be smaller than the one refused and within the known
window less the output reserve. A request too large for that (a prompt larger than the
window on its own) keeps its history, and the compaction fails with the refusal.
"""

from __future__ import annotations

import re
from typing import Any, Final

from dsh_compaction._plan import Plan

__all__ = [
    "REFUSALS",
    "dropped_note",
    "fallback_data",
    "fallback_summary",
    "summarised_before",
    "unfit",
    "unfit_error",
]

#: the failures of a summary that was written but refused by the plugin's checks: the
#: summariser answered, badly (a broken or slow one fails otherwise, and is not a
#: reason to drop history without the user's knowledge)
REFUSALS: Final = frozenset(
    {"EMPTY_SUMMARY", "SUMMARY_NOT_SMALLER", "SUMMARY_TOO_SHORT", "SUMMARY_COPIED"}
    | {"SUMMARY_ECHOED", "SUMMARY_UNCHANGED"}
)


def dropped_note(count: int, code: str, *, in_part: bool = False) -> str:
    """What the summary message says of the ``count`` messages it stood for, dropped
    (``in_part``: after the chunks it summarises)."""
    if in_part:
        return (
            f"[{count} older messages are summarised above only in part, the rest were "
            f"dropped: the summariser's answer for a later part was refused ({code}).]"
        )
    return (
        f"[{count} older messages were dropped without a summary: the summariser's "
        f"answer was refused ({code}).]"
    )


#: the note ``dropped_note`` wrote, ending a summary (with the blank line before it)
_NOTE: Final = re.compile(
    r"\n*\[(\d+) older messages (were dropped without a summary|are summarised above only "
    r"in part, the rest were dropped): the summariser's answer (?:for a later part )?was "
    r"refused \([A-Z_]+\)\.\]\Z"
)


def summarised_before(previous: str | None) -> bool:
    """Whether ``previous`` (the summary a fallback keeps) summarises anything: not
    when it is an earlier fallback's note alone, which ``fallback_summary`` replaces."""
    if previous is None:
        return False
    earlier = _NOTE.search(previous)
    return bool(previous[: earlier.start()].strip()) if earlier is not None else True


def fallback_summary(previous: str | None, so_far: str | None, count: int, code: str) -> str:
    """The text of the fallback's summary message: the summary of the chunks summarised
    before the refused answer (``so_far``, which merges ``previous``), else
    ``previous``, then the note. A note that ends that text already (an earlier
    fallback's) is replaced by one counting its messages too: repeated fallbacks keep
    one note, not one more each time."""
    kept = so_far or previous or ""
    in_part = bool(so_far)
    earlier = _NOTE.search(kept)
    if earlier is not None:
        kept = kept[: earlier.start()]
        count += int(earlier.group(1))
        in_part = in_part or earlier.group(2).startswith("are")
    note = dropped_note(count, code, in_part=in_part)
    return f"{kept}\n\n{note}" if kept else note


def fallback_data(plan: Plan, text: str, refused: dict[str, str]) -> dict[str, Any]:
    """The ``compact/summary`` data of a fallback of ``plan`` whose summary is ``text``
    (``refused``: redacted)."""
    return {
        "summary": text,
        "replaces": plan.cut,
        "kept": list(plan.kept),
        "summarised": len(plan.summarised),
        "merged_previous": plan.previous is not None,
        "source": "fallback",
        "refused": refused,
    }


def unfit(after: int, before: int, fits: float) -> bool:
    """Whether dropping, which leaves a request of ``after`` tokens (an estimate) from
    one of ``before``, is for nothing: it would not be smaller, or not ``fits`` (the
    known window less the output reserve; inf when unknown)."""
    return after >= before or after > fits


def unfit_error(refused: dict[str, str]) -> dict[str, str]:
    """The error of a fallback that would drop for nothing: the refusal, saying so."""
    why = "dropping the messages it would replace would not make the request fit either"
    return refused | {"message": f"{refused['message']}; {why}"}
