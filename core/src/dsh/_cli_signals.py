"""How ``dsh`` ends on signals: SIGTERM, SIGHUP and SIGQUIT cancel the command as Ctrl-C
cancels a turn (``until_terminated``); a signal again while the way out still runs cancels
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
from contextlib import AbstractContextManager, contextmanager, suppress
from typing import TYPE_CHECKING

import anyio
import anyio.abc

from dsh._grace import in_flight

if TYPE_CHECKING:
    from dsh.plugins import PluginManager

__all__ = [
    "end_now",
    "ending",
    "escalate",
    "hurry",
    "lines_ended_by",
    "on_interrupt",
    "until_terminated",
]

#: What a command does on Ctrl-C (the innermost last); True: the command now ends, so
#: that another Ctrl-C is "again" (``until_terminated``).
_handlers: list[Callable[[], bool]] = []
#: What ends the answer's unfinished line before dsh says what a signal did (the
#: innermost last, ``lines_ended_by``).
_line_enders: list[Callable[[], bool]] = []
#: SIGQUIT (Ctrl-\); with SIGHUP, kept ignored where it was as dsh started
#: (``_not_ignored``). Neither is there on Windows.
_QUIT = getattr(signal, "SIGQUIT", None)
_KEPT_IGNORED: tuple[signal.Signals, ...] = tuple(
    s for s in (getattr(signal, "SIGHUP", None), _QUIT) if s is not None
)
#: Whether a Ctrl-C no signal brought (a key of the line editor) began to end the
#: command (``ending``); ``until_terminated`` clears it as it starts.
_ended_by_key: list[bool] = [False]


def on_interrupt(handler: Callable[[], bool]) -> AbstractContextManager[None]:
    """Within this block Ctrl-C calls ``handler`` (until something began to end the
    command); it returns whether the command now ends (a turn cancelled in ``dsh run``,
    a chat quit), so that the next Ctrl-C hurries its way out."""
    return _within(_handlers, handler)


def lines_ended_by(end_line: Callable[[], bool]) -> AbstractContextManager[None]:
    """Within this block what dsh says on a signal (``dsh: terminated``) first ends the
    answer's unfinished line with ``end_line``, which returns whether it ended one on
    the terminal dsh says it on; else it begins with a newline of its own (a ``^C`` the
    terminal echoed, a ``> `` prompt are on that line)."""
    return _within(_line_enders, end_line)


@contextmanager
def _within(stack: list[Callable[[], bool]], item: Callable[[], bool]) -> Iterator[None]:
    stack.append(item)
    try:
        yield
    finally:
        stack.remove(item)


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
    """Run ``command``; SIGTERM (``timeout``, a supervisor), SIGHUP (the terminal
    closed) or SIGQUIT (Ctrl-\\) cancels it as Ctrl-C would a turn, so its way out
    still runs (a running command's processes ended, the session flushed, the agents
    disposed, a local model's build stopped), and the status is 128 + the signal's
    number (143, 129, 131), as for a process the signal ended. SIGHUP or SIGQUIT ignored
    when dsh started (``nohup``, ``trap '' HUP``, a background job of a script) stays
    ignored: the command outlives its terminal, as asked. Ctrl-C that no handler takes
    (``on_interrupt``) cancels it the same way, with status 130."""
    status = 143
    failure: Exception | None = None
    running = anyio.CancelScope()
    _ended_by_key[0] = False
    async with anyio.create_task_group() as tg:

        async def on_signals(*, task_status: anyio.abc.TaskStatus[None]) -> None:
            nonlocal status
            interrupts = terminations = late = 0  # late: Ctrl-Cs after a SIGTERM
            with anyio.open_signal_receiver(
                signal.SIGINT, signal.SIGTERM, *_not_ignored()
            ) as signals:
                task_status.started()  # from here a signal is this receiver's
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
                        said = "quit" if signum == _QUIT else "terminated"
                        if escalate(terminations + late, 2):  # a Ctrl-C after one counts
                            end_now(status, f"{said} again")
                        status = 128 + signum
                        hurry(said if terminations == 1 else f"{said} again")
                    running.cancel()

        # the receiver open before the command starts: its first steps are synchronous
        # (dsh.llm imported), and a Ctrl-C then would meet asyncio's own handler
        await tg.start(on_signals)
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


def _not_ignored() -> list[signal.Signals]:
    return [s for s in _KEPT_IGNORED if signal.getsignal(s) != signal.SIG_IGN]


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
        # a line of its own: after the answer's unfinished line, or a ^C echoed, a "> "
        # (a terminal's); a log's lines before it are ended
        ended = bool(_line_enders and _line_enders[-1]())
        begun = "\n" if not ended and sys.stderr.isatty() else ""
        print(
            f"{begun}dsh: {said}" + (f"; {what} {', '.join(names)}" if names else ""),
            file=sys.stderr,
        )
        sys.stderr.flush()
