"""How ``dsh`` ends on signals: SIGTERM and SIGHUP cancel the command as Ctrl-C cancels
a turn (``until_terminated``); a signal again while the way out still runs cancels
what it waits on in a grace (``hurry``: an observer, a flush, ``dsh._grace``); one more
while such a hook still runs (blocked in a thread, which no cancellation reaches) ends
the process at once (``end_now``)."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from contextlib import suppress
from typing import TYPE_CHECKING

import anyio

from dsh._grace import in_flight

if TYPE_CHECKING:
    from dsh.plugins import PluginManager

__all__ = ["end_now", "escalate", "hurry", "until_terminated"]


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
    '' HUP``) stays ignored: the command outlives its terminal, as asked."""
    status = 143
    failure: Exception | None = None
    hangup = getattr(signal, "SIGHUP", signal.SIGTERM)  # none on Windows
    if signal.getsignal(hangup) == signal.SIG_IGN:
        hangup = signal.SIGTERM
    running = anyio.CancelScope()
    async with anyio.create_task_group() as tg:

        async def on_sigterm() -> None:
            nonlocal status
            count = 0
            with anyio.open_signal_receiver(signal.SIGTERM, hangup) as signals:
                async for signum in signals:
                    count += 1
                    if escalate(count, 2):  # the way out takes too long
                        end_now(status, "terminated again")
                    status = 128 + signum
                    hurry("terminated" if count == 1 else "terminated again")
                    running.cancel()

        tg.start_soon(on_sigterm)
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
