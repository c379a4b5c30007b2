"""Why a compaction fails: the checks of a summary and of the history it would replace,
and the error each failure logs in ``compact/end``."""

from __future__ import annotations

from collections.abc import Sequence

from dsh import DshError, HookError, Message, ModelError, get_logger, redact
from dsh.errors import exception_words
from dsh_compaction import _host
from dsh_compaction._answers import empty
from dsh_compaction._plan import Plan
from dsh_compaction._settings import CompactionSettings
from dsh_compaction._summarise import Summary

__all__ = ["Failed", "check_summary", "check_unchanged", "error_of", "failure_of", "redacted"]

log = get_logger("dsh_compaction")


class Failed(Exception):
    """A compaction's own failure: ``error`` is what ``compact/end`` logs (with the
    ``plugin`` whose summary failed, if a plugin wrote it)."""

    def __init__(self, code: str, message: str, plugin: str | None = None) -> None:
        super().__init__(message)
        self.error = {"code": code, "message": message}
        if plugin is not None:
            self.error["plugin"] = plugin


def error_of(exc: BaseException, settings: CompactionSettings) -> dict[str, str]:
    """The ``error`` a compaction that raised ``exc`` logs (not redacted)."""
    if isinstance(exc, Failed):
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
    return {"code": "INTERNAL", "message": exception_words(exc)}


def failure_of(
    agent: _host.Host, exc: BaseException, settings: CompactionSettings
) -> dict[str, str]:
    """``error_of``, a plugin's hook impl's failure (a ``HookError``: its
    ``compaction_keep`` or ``compaction_summarize``) reported first as dsh reports a
    failure it contains, so that a test's ``ErrorRecorder`` sees it."""
    if isinstance(exc, HookError):
        _host.report(agent, exc)
    return error_of(exc, settings)


def redacted(error: dict[str, str]) -> dict[str, str]:
    """``error`` without secrets: a summariser's failure may quote a model API key."""
    return {key: redact(value) for key, value in error.items()}


def check_summary(summary: Summary, plan: Plan, tokens: int) -> None:
    """Raise ``Failed`` when ``summary`` (``tokens`` long as a message) is empty or not
    smaller than what ``plan`` replaces."""
    if not summary.text:
        who = f"plugin {summary.plugin!r}" if summary.plugin else summary.source
        raise Failed("EMPTY_SUMMARY", empty(who), summary.plugin)
    if tokens >= plan.replaced_tokens:
        raise Failed(
            "SUMMARY_NOT_SMALLER",
            f"the summary ({tokens} tokens) is not smaller than the "
            f"{plan.replaced_tokens} tokens it would replace",
            summary.plugin,
        )


def check_unchanged(planned: Sequence[Message], now: Sequence[Message], cut: int) -> None:
    """Raise ``Failed`` when the messages before ``cut`` changed while summarising."""
    if len(now) < cut or any(now[i] is not planned[i] for i in range(cut)):
        raise Failed("HISTORY_CHANGED", "the history changed while the summary was written")
