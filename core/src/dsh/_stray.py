"""A stray cancellation: a cancellation exception that no cancellation of the task it
is raised in caused. A tool awaiting a future someone else cancelled, a model stream or
an observer re-raising another task's ``asyncio.CancelledError``: that is the failure of
whatever raised it (an error result, a turn ending ``error``, a reported observer), not
an abort of the turn; taken for one, it would end the agent's loop task and cancel the
harness's task group with it.

A real cancellation is seen from the task itself: a cancel scope around it is cancelled
(an abort, ``cancel()``, a disposal, the harness exiting: on either backend,
``anyio.current_effective_deadline()`` is then ``-inf``), or, on asyncio, a
``task.cancel()`` is pending (``Task.cancelling()``). On trio, an
``asyncio.CancelledError`` is never trio's own.
"""

from __future__ import annotations

import asyncio
import math

__all__ = ["cancelled_only", "failed", "failure_words", "is_stray", "stray_words"]


def is_stray(exc: BaseException) -> bool:
    """Whether ``exc`` is a cancellation exception no cancellation of this task caused."""
    import anyio  # lazily: ``dsh --help`` imports no anyio

    try:
        cancelled = anyio.get_cancelled_exc_class()
    except Exception:  # no event loop runs: no task of it is being cancelled
        return isinstance(exc, asyncio.CancelledError)
    if not isinstance(exc, asyncio.CancelledError | cancelled):
        return False
    if anyio.current_effective_deadline() == -math.inf:
        return False  # a cancel scope around this task was cancelled
    if cancelled is asyncio.CancelledError:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            return False  # task.cancel(): asyncio's own cancellation
    return True


def failed(exc: BaseException) -> bool:
    """Whether ``exc`` is the failure of what raised it, which a caller contains: an
    ``Exception``, a stray cancellation, or any other ``BaseException`` (``SystemExit``
    from argparse or click, ``GeneratorExit``, a plugin's own subclass), as pytest takes
    a test's ``SystemExit``. False only for what must propagate: ``KeyboardInterrupt``, a
    real cancellation, a test's outcome (``pytest.fail``), and a group holding one."""
    if isinstance(exc, BaseExceptionGroup) and not isinstance(exc, Exception):
        return all(map(failed, exc.exceptions))  # a stray one among failures: a failure
    if isinstance(exc, Exception):
        return True
    if isinstance(exc, KeyboardInterrupt) or _is_test_outcome(exc):
        return False
    return not _is_cancellation(exc) or is_stray(exc)


def _is_test_outcome(exc: BaseException) -> bool:
    """``pytest.fail``/``skip`` raised in a hook impl or tool under test: the test's
    outcome, which pytest must see (known by its base class, without importing pytest)."""
    return any(
        kind.__name__ == "OutcomeException" and kind.__module__ == "_pytest.outcomes"
        for kind in type(exc).__mro__
    )


def cancelled_only(exc: BaseException) -> bool:
    """Whether ``exc`` is a cancellation, or a group made only of cancellations."""
    if isinstance(exc, BaseExceptionGroup):
        return all(map(cancelled_only, exc.exceptions))
    return _is_cancellation(exc)


def _is_cancellation(exc: BaseException) -> bool:
    import anyio  # lazily: ``dsh --help`` imports no anyio

    if isinstance(exc, asyncio.CancelledError):
        return True
    try:
        return isinstance(exc, anyio.get_cancelled_exc_class())
    except Exception:  # no event loop runs
        return False


def failure_words(exc: BaseException) -> str:
    """``exc``, a failure (``failed``), in words: ``Type: message``, ``Type`` alone when
    its message is empty (``EOFError``, not ``EOFError: ``); a stray cancellation's says
    why it is a failure."""
    if _is_cancellation(exc):
        return stray_words(exc)
    from dsh.errors import exception_words  # lazily: dsh.errors imports this lazily

    return exception_words(exc)


def stray_words(exc: BaseException) -> str:
    """``exc``, a stray cancellation, in words: what it is and why it is a failure."""
    said = f": {exc}" if str(exc) else ""
    return (
        f"{type(exc).__name__}{said} (a cancellation that no abort, cancel or disposal "
        "of the turn caused: something it awaited was cancelled)"
    )
