"""What is wrong with a hook impl's result, said as the failure of the impl that returned
it (the dispatcher, ``dsh._calling``, raises it as that impl's ``HookError``): a result
of the wrong type, an awaitable from a plain ``def``, or one a caller's check refuses."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

__all__ = ["Check", "problem", "typed", "unawaited", "wrong_type"]

#: What is wrong with an impl's result (said as "returned ..."), or None when nothing is.
Check = Callable[[Any], str | None]


def wrong_type(result: object, expect: type) -> TypeError:
    if inspect.isawaitable(result):
        return unawaited(result)
    lacks = _lacks(result, expect)
    return TypeError(
        f"returned {type(result).__name__} where {expect.__name__} is expected"
        + (f" (it has no {', '.join(lacks)})" if lacks else "")
    )


def _lacks(result: object, expect: type) -> list[str]:
    """The methods of Protocol ``expect`` that ``result`` has not (none for a class)."""
    if not getattr(expect, "_is_protocol", False):
        return []
    methods = [name for name, value in vars(expect).items() if inspect.isfunction(value)]
    return [name for name in methods if not name.startswith("_") and not hasattr(result, name)]


def typed(expect: type, wrong: Check) -> Check:
    """``wrong`` after the check of the hook's declared type (awaitables are refused
    before either)."""

    def check(result: object) -> str | None:
        return wrong(result) if isinstance(result, expect) else str(wrong_type(result, expect))

    return check


def problem(wrong: Check, result: object) -> Exception | None:
    """What ``wrong`` finds in ``result``, as the exception of the impl that returned
    it: None (only None) means nothing; a check that raises (a result too malformed to
    look at) gives its exception; a refusal without a reason ("") says so."""
    try:
        said = wrong(result)
    except Exception as exc:
        return exc
    if said is None:
        return None
    if isinstance(said, str) and said:
        return TypeError(said)
    return TypeError(
        f"returned {type(result).__name__}, which the caller's check refused without "
        f"saying why (it returned {said!r}, not None or a reason)"
    )


def unawaited(result: object) -> TypeError:
    """A plain impl returned an awaitable: dsh awaits only ``async def`` impls (it
    decides once, when the plan is made), so say so instead of dropping it unawaited."""
    close = getattr(result, "close", None)
    if inspect.iscoroutine(result) and close is not None:
        close()  # no "never awaited" warning pointing into dsh
    return TypeError(
        f"returned {type(result).__name__} from a plain def; make the impl async def so "
        "that it is awaited"
    )
