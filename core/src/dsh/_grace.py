"""The grace an async hook impl in flight gets once its agent is aborted, cancelled or
disposed: ``GRACE_SECONDS``, after which it is cancelled and reported (a ``HookError``
naming the plugin and the hook, its cause a ``TimeoutError``).

An observer's notification runs shielded, so that an abort never tears it (every
observer sees every event); without a bound, one that never returns would keep the
agent from ever ending its turn. Each agent has a ``Grace``, current in its tasks (a
context variable): an async impl of a notification (``session_event``, ``agent_status``
…) or of ``session_flush`` awaited there runs in a cancel scope of its own, registered
with the grace, whose deadline ``Grace.start`` sets; until then it has none, so an
impl that finishes is never cut short. A plugin's observer cut short once is cancelled
at once at its next call until the next turn; a ``session_flush`` impl never is: each
flush is a save (one a turn, one at disposal, the last chance), so each call has a grace
of its own. ``expire_started`` cuts short every one whose grace has begun (``dsh run``
on a second signal).
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:  # anyio is imported when first needed: ``dsh --help`` needs none
    from anyio import CancelScope

    from dsh._impl import Impl

__all__ = [
    "GRACE_SECONDS",
    "Grace",
    "bounded",
    "current",
    "expire_started",
    "graced",
    "in_flight",
    "started",
    "within",
]

#: Seconds an async impl in flight may still take once its agent is aborted, cancelled
#: or disposed (tests lower it). Read when a grace starts.
GRACE_SECONDS: float = 5.0

#: What an impl in a grace runs: its plugin's name and the hook.
Label = tuple[str, str]

#: Every scope in flight under some grace (in this process: the CLI's way out reads
#: it), with what it runs.
_IN_FLIGHT: Final[dict[CancelScope, Label]] = {}

#: Hooks whose every call has a grace of its own, even after one was cut short: a flush
#: is the save of a turn (and at disposal the last chance to save it).
_SAVES: Final = frozenset({"session_flush"})

_current: Final[ContextVar[Grace | None]] = ContextVar("dsh_grace", default=None)


class Grace:
    """One agent's: ``start`` gives each async impl in flight ``GRACE_SECONDS`` from
    then to return, and each that starts before ``reset`` as long from its own start,
    but none to a plugin's observer of a hook that has already been cut short (a plugin
    that hangs on every event costs one grace, not one an event). A flush is never
    refused so: each ``session_flush`` call is a save, with a grace of its own."""

    __slots__ = ("cut", "deadline", "reason", "scopes", "tasks")

    def __init__(self) -> None:
        self.deadline = math.inf  # of what is in flight when the grace starts
        self.reason = ""
        self.scopes: set[CancelScope] = set()
        self.cut: set[Label] | None = None  # what was cut short since the grace started
        #: The ids of the tasks it is current in, from ``enter`` to ``leave`` (an agent's
        #: loop task and its teardown: what its disposal waits for).
        self.tasks: tuple[int, ...] = ()

    def start(self, reason: str) -> None:
        """The agent is being aborted (``reason``: "abort", "disposal"): the grace
        begins now unless it already has (a second abort does not extend it; once
        nothing is in flight, what starts later is named after this stop)."""
        if self.deadline == math.inf:
            import anyio

            self.deadline = anyio.current_time() + GRACE_SECONDS
            self.reason = f"{GRACE_SECONDS:g} s of the {reason}"
            for scope in self.scopes:
                scope.deadline = self.deadline
        elif not self.scopes:  # an impl starting later has GRACE_SECONDS from its start
            self.reason = f"{GRACE_SECONDS:g} s of the {reason}"

    def reset(self) -> None:
        """A new turn: what runs now is not in anyone's grace."""
        self.deadline = math.inf
        self.cut = None

    def enter(self) -> None:
        """Make this the grace of the calling task (and the tasks it starts); the task is
        in ``tasks`` until it calls ``leave``."""
        import anyio

        _current.set(self)
        self.tasks += (anyio.get_current_task().id,)

    def leave(self) -> None:
        """The calling task, which called ``enter``, is ending: out of ``tasks`` (an id
        is reused by a later task)."""
        import anyio

        me = anyio.get_current_task().id
        self.tasks = tuple(task for task in self.tasks if task != me)

    def _deadline(self, label: Label) -> float:
        if self.deadline == math.inf:
            return math.inf
        if self.cut is not None and label in self.cut:
            return -math.inf
        import anyio

        return max(self.deadline, anyio.current_time() + GRACE_SECONDS)


def current() -> Grace | None:
    return _current.get()


@contextmanager
def started(reason: str) -> Iterator[None]:
    """A grace of its own, begun now, for the hooks awaited in the block (the harness's
    ``harness_stopping`` as it leaves)."""
    grace = Grace()
    token = _current.set(grace)
    grace.start(reason)
    try:
        yield
    finally:
        _current.reset(token)


@contextmanager
def within(grace: Grace) -> Iterator[None]:
    """Make ``grace`` current in the block (an agent's, around the ``agent_created``
    observers of its start, told in the creator's task): its disposal bounds them."""
    token = _current.set(grace)
    try:
        yield
    finally:
        _current.reset(token)


def bounded(hook: str, impl: Impl, result: Awaitable[Any], shield: bool = False) -> Awaitable[Any]:
    """``result`` (what ``impl`` of ``hook`` returned) as it is, or, in a task with a
    grace (an agent's), to be awaited within it; awaited, either gives what it gives."""
    grace = _current.get()
    if grace is None:
        return result
    return graced(grace, (impl.plugin_name, hook), result, shield)


async def graced(grace: Grace, label: Label, awaitable: Awaitable[Any], shield: bool) -> Any:
    """Await ``awaitable`` (what ``label`` names: its plugin and hook) in a scope
    ``grace`` can bound, and give what it gives; ``TimeoutError`` if it was cut short."""
    import anyio

    value: Any = None
    with anyio.CancelScope(shield=shield, deadline=grace._deadline(label)) as scope:
        grace.scopes.add(scope)
        _IN_FLIGHT[scope] = label
        try:
            value = await awaitable
        finally:
            grace.scopes.discard(scope)
            del _IN_FLIGHT[scope]
    if scope.cancelled_caught:
        if scope.deadline == -math.inf:
            raise TimeoutError("cancelled at once: it did not return from an earlier call")
        if label[1] not in _SAVES:  # an observer: none for its next calls
            if grace.cut is None:
                grace.cut = set()
            grace.cut.add(label)
        if anyio.current_time() < scope.deadline:  # expire_started() cut it
            raise TimeoutError(f"cancelled before the end of its grace ({grace.reason})")
        raise TimeoutError(f"did not return within {grace.reason}; cancelled")
    return value


def expire_started() -> list[str]:
    """Cancel now each impl in flight whose grace has begun (the way out of an abort or
    a disposal is taking too long); what they run, each once, in the order they began."""
    cut = {scope: label for scope, label in _IN_FLIGHT.items() if scope.deadline != math.inf}
    for scope in cut:
        scope.cancel()
    return _named(cut.values())


def in_flight() -> list[str]:
    """What runs under a grace now, each once, in the order it began."""
    return _named(_IN_FLIGHT.values())


def _named(labels: Iterable[Label]) -> list[str]:
    return [f"plugin {plugin!r} hook {hook}" for plugin, hook in dict.fromkeys(labels)]
