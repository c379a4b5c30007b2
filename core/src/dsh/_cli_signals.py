"""How ``dsh`` ends on signals: SIGTERM and SIGHUP cancel the command as Ctrl-C cancels
a turn (``until_terminated``); a signal again while the way out still runs cancels
what it waits on in a grace (``hurry``: an observer, a flush, ``dsh._grace``); one more
while such a hook still runs (blocked in a thread, which no cancellation reaches) ends
the process at once (``end_now``).

One receiver takes every signal for the whole command: Ctrl-C goes to the command's
own handler while it has one (``on_interrupt``: a turn cancelled, a chat quit) and
nothing has begun to end it; after that, and wherever no handler is set (starting,
the way out), it counts as one more signal of those above."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING

import anyio

from dsh._grace import in_flight

if TYPE_CHECKING:
    from dsh.plugins import PluginManager

__all__ = ["end_now", "ending", "escalate", "hurry", "on_interrupt", "until_terminated"]

#: What a command does on Ctrl-C (the innermost last); True: the command now ends, so
#: that another Ctrl-C is "again" (``until_terminated``).
_handlers: list[Callable[[], bool]] = []
#: Whether a Ctrl-C no signal brought (a key of the line editor) began to end the
#: command (``ending``); ``until_terminated`` clears it as it starts.
_ended_by_key: list[bool] = [False]


@contextmanager
def on_interrupt(handler: Callable[[], bool]) -> Iterator[None]:
    """Within this block Ctrl-C calls ``handler`` (until something began to end the
    command); it returns whether the command now ends (a turn cancelled in ``dsh run``,
    a chat quit), so that the next Ctrl-C hurries its way out."""
    _handlers.append(handler)
    try:
        yield
    finally:
        _handlers.remove(handler)


def ending() -> None:
    """Say that a Ctrl-C read as a key (the line editor's raw terminal sends no signal)
    began to end the command, as a handler returning True does: a SIGINT after it is
    "again"."""
    _ended_by_key[0] = True


async def until_terminated(
    command: Callable[[argparse.Namespace, PluginManager], Awaitable[int]],
    args: argparse.Namespace,
    pm: PluginManager,
) -> int:
    """Run ``command``; SIGTERM (``timeout``, a supervisor) or SIGHUP (the terminal
    closed) cancels it as Ctrl-C would a turn, so its way out still runs (a running
    command's processes ended, the session flushed, the agents disposed, a local
    model's build stopped), and the status is 128 + the signal's number (143, 129), as
    for a process the signal ended. SIGHUP ignored when dsh started (``nohup``, ``trap
    '' HUP``) stays ignored: the command outlives its terminal, as asked. Ctrl-C that
    no handler takes (``on_interrupt``) cancels it the same way, with status 130."""
    status = 143
    failure: Exception | None = None
    hangup = getattr(signal, "SIGHUP", signal.SIGTERM)  # none on Windows
    if signal.getsignal(hangup) == signal.SIG_IGN:
        hangup = signal.SIGTERM
    running = anyio.CancelScope()
    _ended_by_key[0] = False
    async with anyio.create_task_group() as tg:

        async def on_signals() -> None:
            nonlocal status
            interrupts = terminations = late = 0  # late: Ctrl-Cs after a SIGTERM
            with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM, hangup) as signals:
                async for signum in signals:
                    if signum == signal.SIGINT:
                        if not interrupts and _ended_by_key[0]:  # the editor's Ctrl-C quit
                            interrupts, status = 1, 130
                        if not (interrupts or terminations) and _handlers:
                            if _handlers[-1]():  # the command's own; it now ends
                                interrupts, status = 1, 130
                            continue
                        interrupts += 1
                        if terminations:
                            late += 1
                        if escalate(interrupts + terminations, 3):  # the way out takes too long
                            end_now(status, "interrupted again")
                        again = interrupts > 1 or terminations > 0
                        hurry("interrupted again" if again else "interrupted")
                        if again:  # the command already ends: it goes on doing so
                            continue
                        status = 130
                    else:
                        terminations += 1
                        if escalate(terminations + late, 2):  # a Ctrl-C after one counts
                            end_now(status, "terminated again")
                        status = 128 + signum
                        hurry("terminated" if terminations == 1 else "terminated again")
                    running.cancel()

        tg.start_soon(on_signals)
        try:
            with running:
                status = await command(args, pm)
        except Exception as exc:  # raised below as it is: the group would wrap it
            failure = exc
        finally:
            tg.cancel_scope.cancel()
    if failure is not None:
        raise failure
    return status


def escalate(count: int, after: int) -> bool:
    """Whether the ``count``-th signal should end the process at once: from the
    ``after``-th while a hook still runs in its grace (one blocked in a thread, which
    no cancellation reaches), from the one after it whatever the way out waits on."""
    return count > after or (count == after and bool(in_flight()))


def hurry(said: str) -> None:
    """Say ``said``; what an abort or a disposal already waits on (an observer within
    its grace, ``dsh._grace``) is cancelled now, and named."""
    from dsh._grace import expire_started

    _say(said, "cancelling", expire_started())


def end_now(status: int, said: str) -> None:
    """End the process at once with ``status``: a signal came again while the way out
    of the first still ran (what it waits on may never return)."""
    _say(said, "still running:", in_flight())
    with suppress(OSError, ValueError):
        sys.stdout.flush()
    os._exit(status)


def _say(said: str, what: str, names: list[str]) -> None:
    with suppress(OSError):  # a closed terminal cannot be told
        print(f"\ndsh: {said}" + (f"; {what} {', '.join(names)}" if names else ""), file=sys.stderr)
        sys.stderr.flush()
