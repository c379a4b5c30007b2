"""What is wrong with a hook impl's result, said as the failure of the impl that returned
it (the dispatcher, ``dsh._calling``, raises it as that impl's ``HookError``): a result
of the wrong type, an awaitable from a plain ``def``, or one a caller's check refuses.

A Protocol type (``SessionPersistence``) is checked by its members as a caller uses
them, not by ``isinstance``: since Python 3.12 a runtime-checkable Protocol's
``isinstance`` looks only at the class (``inspect.getattr_static``), so an object that
forwards through ``__getattr__`` (a wrapper plugin's store) would be refused there and
accepted on 3.11, and an attribute that is no method would pass on every version."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

__all__ = ["Check", "conforms", "problem", "typed", "unawaited", "wrong_type"]

#: What is wrong with an impl's result (said as "returned ..."), or None when nothing is.
Check = Callable[[Any], str | None]


def conforms(result: object, expect: type) -> bool:
    """Whether ``result`` is of type ``expect``: for a Protocol, whether it has each of
    its members (the same answer on every Python; see the module's docstring)."""
    if vars(expect).get("_is_protocol", False):
        return not _lacks(result, expect)
    return isinstance(result, expect)


def wrong_type(result: object, expect: type, in_async: bool = False) -> TypeError:
    """``result`` is not of type ``expect``; ``in_async``: an ``async def`` impl gave it
    (as what it awaited to), which for an awaitable says the impl forgot an ``await``."""
    if inspect.isawaitable(result):
        return unawaited(result, in_async)
    lacks = _lacks(result, expect) if vars(expect).get("_is_protocol", False) else []
    missing = [name for name, there in lacks if not there]
    said = [f"it has no {', '.join(missing)}"] if missing else []
    said += [f"its {name} is not a method" for name, there in lacks if there]
    return TypeError(
        f"returned {type(result).__name__} where {expect.__name__} is expected"
        + (f" ({'; '.join(said)})" if said else "")
    )


def _lacks(result: object, expect: type) -> list[tuple[str, bool]]:
    """The public members of Protocol ``expect`` (its own and its Protocol bases') that
    ``result`` lacks, each as ``(name, there)``: ``there`` when it has the attribute but
    it is no method (not callable) where the Protocol's is one. Found by ``getattr``, as
    a caller finds them (``__getattr__`` counts); one whose lookup fails, lacked."""
    lacked: list[tuple[str, bool]] = []
    seen: set[str] = set()
    for base in expect.__mro__:
        if not vars(base).get("_is_protocol", False) or base.__module__ == "typing":
            continue
        members = {**dict.fromkeys(inspect.get_annotations(base)), **vars(base)}
        for name, value in members.items():
            if name.startswith("_") or name in seen:
                continue
            seen.add(name)
            try:
                found = getattr(result, name)
            except Exception:  # AttributeError, or a __getattr__ / property that fails
                lacked.append((name, False))
                continue
            method = inspect.isfunction(value) or isinstance(value, classmethod | staticmethod)
            if method and not callable(found):
                lacked.append((name, True))
    return lacked


def typed(expect: type, wrong: Check) -> Check:
    """``wrong`` after the check of the hook's declared type (awaitables are refused
    before either)."""

    def check(result: object) -> str | None:
        return wrong(result) if conforms(result, expect) else str(wrong_type(result, expect))

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


def unawaited(result: object, in_async: bool = False) -> TypeError:
    """A plain impl returned an awaitable: dsh awaits only ``async def`` impls (it
    decides once, when the plan is made), so say so instead of dropping it unawaited.
    ``in_async``: an ``async def`` impl returned it, once awaited: a forgotten ``await``
    inside the impl (``return self.flush(...)``), which making it async cannot mend."""
    close = getattr(result, "close", None)
    if inspect.iscoroutine(result) and close is not None:
        close()  # no "never awaited" warning pointing into dsh
    if in_async:
        return TypeError(
            f"returned {type(result).__name__} from an async def without awaiting it; "
            "await it in the impl (return await ...)"
        )
    return TypeError(
        f"returned {type(result).__name__} from a plain def; make the impl async def so "
        "that it is awaited"
    )
