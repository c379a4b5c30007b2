"""What a compaction did (``CompactionResult``): the value ``compact`` and
``compact_now`` return, and chat's ``/compact`` prints."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

__all__ = ["CUT_OFF", "CompactionResult", "Outcome", "Reason", "error_words"]

#: what the notes of a summary cut off at its output limit add
CUT_OFF = "(summary cut off at max_summary_tokens)"

Reason = Literal["threshold", "overflow", "manual"]
Outcome = Literal["summarized", "dropped", "pruned", "skipped", "failed", "aborted"]


def error_words(error: Mapping[str, str]) -> str:
    """A compaction's ``error`` as a person reads it: ``CODE: message``, or the code
    alone when the message is empty (``SERVER``, not ``SERVER: ``), as
    ``dsh.errors.exception_words`` says an exception."""
    code, message = error.get("code", "UNKNOWN"), error.get("message")
    return f"{code}: {message}" if message else code


@dataclass(frozen=True, slots=True)
class CompactionResult:
    """What a compaction did; ``changed`` when the history was compacted. ``error``:
    why it failed, or why the summary that followed a ``pruned`` too-large result's
    stub did (see ``compact``)."""

    outcome: Outcome
    reason: Reason
    tokens_before: int
    tokens_after: int
    error: dict[str, str] | None = None
    summary: str | None = None
    #: the summary (or one of its chunks' answers) was cut off at ``max_summary_tokens``
    truncated: bool = False
    #: ``dropped``: why the summary was refused (its messages were dropped instead)
    refused: dict[str, str] | None = None

    @property
    def changed(self) -> bool:
        return self.outcome in ("summarized", "dropped", "pruned")

    def __str__(self) -> str:
        """One sentence for a person (chat's ``/compact`` prints it)."""
        tokens = f"~{self.tokens_before:,} → ~{self.tokens_after:,} tokens"
        if self.outcome == "summarized":
            cut = f" {CUT_OFF}" if self.truncated else ""
            return f"the history was summarised ({tokens}){cut}"
        error = self.error or self.refused or {}
        why = error_words(error)
        if self.outcome == "dropped":
            return f"the summary was refused ({why}); older messages were dropped ({tokens})"
        if self.outcome == "pruned":
            pruned = f"old tool results were pruned ({tokens})"
            if self.error is not None:  # too-large results stubbed, the summary after failed
                return f"{pruned}, but compacting the rest failed ({why})"
            return pruned
        if self.outcome == "skipped":  # the NOTHING message may say why (``_keep``)
            said = error.get("message") or "nothing to compact"
            return f"{said} (~{self.tokens_before:,} tokens)"
        if self.outcome == "aborted":
            if self.error is not None:  # ``NOT_SAVED``
                return f"aborted ({why})"
            return "aborted; the history is unchanged"
        return f"failed, the history is unchanged ({why})"
