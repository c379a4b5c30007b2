"""The terminal as dsh-permissions' ``tools_approval`` front end (``dsh chat``, and
``dsh run`` in a terminal): a call that needs approval is shown on stderr and the next
line typed answers it. A question asked while dsh is in the background of its terminal
is denied (no one can be asked), so that the run ends instead of waiting for a ``fg``."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

import anyio

from dsh._cli_question import call_shown
from dsh._cli_terminal import BACKGROUND_POLL, drop_typed, in_background, nothing_back
from dsh._visible import visible
from dsh.approvals import UNANSWERED, ApprovalAnswer, ApprovalRequest
from dsh.hookspecs import hookimpl

__all__ = ["TerminalApprovals", "asks_at_terminal"]

_END_OF_INPUT = f"{UNANSWERED} the input ended (no one is at the terminal to answer)"
_IN_BACKGROUND = (
    f"{UNANSWERED} dsh runs in the background of its terminal, where it cannot ask "
    "(no one was asked)"
)


def asks_at_terminal() -> bool:
    """A question can be put to a person: typed answers (stdin) to a question they see
    (stderr). With stderr elsewhere (``2>log``) it would wait unseen: such calls are
    denied at once, as with no terminal."""
    return sys.stdin is not None and sys.stdin.isatty() and sys.stderr.isatty()


class TerminalApprovals:
    """The terminal as a ``tools_approval`` front end: a call that needs approval is
    shown on stderr, and the next line typed answers it (``y`` once, ``a`` always,
    anything else denies; a sentence is passed to the model as the reason; ``a`` where
    nothing can be remembered allows once, which is said). Once the input has ended
    (``close()``) every question, pending or new, is denied; so is one asked while dsh
    is in the background of its terminal, or pending when it is sent there (fail
    closed: ``dsh run ... &`` ends its turn rather than wait for a ``fg``).

    Only what is typed once the question shows answers it: what was typed before (a
    ``y`` half typed while the turn streamed, a steer not yet sent) is set aside when
    the question shows (``set_aside``), so that Enter alone denies, as it says."""

    def __init__(self) -> None:
        #: Called as a question shows: takes what was typed and not sent out of the way
        #: of the answer; returns what gives it back once the question is answered. In
        #: canonical mode it is dropped (``drop_typed``); chat's line editor sets it.
        self.set_aside: Callable[[], Callable[[], None]] = drop_typed
        self._waiting: tuple[anyio.Event, list[str | None]] | None = None
        self._asked = anyio.Event()  # set (and replaced) each time a question waits
        self._closed = False
        stdin = sys.stdin
        self._terminal = stdin.fileno() if stdin is not None and stdin.isatty() else None

    @hookimpl
    async def tools_approval(self, request: ApprovalRequest) -> ApprovalAnswer:
        while self._waiting is not None:  # one question at a time
            await self._waiting[0].wait()
        remember = request.remember
        # with nothing "always" could remember (an ask rule covers the call, or it
        # cannot be checked: it is asked each time) it is not offered; typed anyway, it
        # allows this call, which is said
        always = f", a = always ({_remembered(remember)})" if remember else ""
        each = "" if remember else "; asked again each time"
        # the call whole (what is approved is what was seen), its text values below it
        call, below = call_shown(request.tool, request.arguments)
        asking = not self._closed and not self._background()
        # the terminal's typed-ahead input is dropped BEFORE the question shows: a key
        # typed once it shows (the answer, a Ctrl-D) must not go with it. (The editor's
        # keys wait for the event loop, which reads none until the question is out.)
        dropped = asking and self.set_aside is drop_typed
        give_back = drop_typed() if dropped else nothing_back
        print(
            f"\n? {call}: {visible(request.reason)}\n"
            + "".join(f"{line}\n" for line in below)
            + f"  allow? y = once{always}, n = no (or type a reason for the model){each}",
            file=sys.stderr,
            flush=True,
        )
        box: list[str | None] = []
        if self._closed:
            box.append(None)
        elif asking:
            if not dropped:  # the editor's line: set aside (and said) below the question
                give_back = self.set_aside()
            event = anyio.Event()
            self._waiting = (event, box)
            self._asked.set()
            self._asked = anyio.Event()
            started = time.monotonic()
            try:
                await self._answered(event)
            except anyio.get_cancelled_exc_class():
                # the asker's timeout (dsh-permissions' ask_timeout) ran out: said under
                # the question, or a late "y" reads as a prompt to the model with nothing
                # to explain it
                timeout = request.timeout
                if timeout is not None and time.monotonic() - started >= timeout - 0.1:
                    print(f"  denied: no answer within {timeout:g} s", file=sys.stderr, flush=True)
                raise
            finally:
                self._waiting = None
                give_back()
        if not box:  # dsh is in the background (or was sent there): no one was asked
            print(
                "  denied: dsh is in the background of its terminal, where it cannot ask "
                "(run it in the foreground to answer)",
                file=sys.stderr,
                flush=True,
            )
            return ApprovalAnswer.deny(_IN_BACKGROUND)
        if box[0] is None:
            print("  denied: the input ended", file=sys.stderr, flush=True)
            return ApprovalAnswer.deny(_END_OF_INPUT)
        line = box[0].strip()
        if line.lower() in ("y", "yes"):
            return ApprovalAnswer.once()
        if line.lower() in ("a", "always"):
            if not remember:
                print(_ONCE_ONLY, file=sys.stderr, flush=True)
            return ApprovalAnswer.always()
        if line.lower() in ("", "n", "no"):
            return ApprovalAnswer.deny("the user said no")
        return ApprovalAnswer.deny(line)

    def _background(self) -> bool:
        return self._terminal is not None and in_background(self._terminal)

    async def _answered(self, event: anyio.Event) -> None:
        """Wait for the answer; return unanswered once dsh is in the background."""
        while not event.is_set():
            with anyio.move_on_after(BACKGROUND_POLL):
                await event.wait()
            if self._background():
                return

    @property
    def asking(self) -> bool:
        """Whether a question waits for its answer."""
        return self._waiting is not None

    async def question(self) -> None:
        """Return once a question waits for its answer."""
        while self._waiting is None:
            await self._asked.wait()

    def answer(self, line: str | None) -> bool:
        """Give ``line`` to the pending question (None: no answer will come); False if
        none is pending."""
        if self._waiting is None:
            return False
        event, box = self._waiting
        box.append(line)
        event.set()
        return True

    def close(self) -> None:
        """The input ended: deny the pending question and every later one."""
        self._closed = True
        self.answer(None)


_ONCE_ONLY = (
    "  allowed once only: this call is asked about each time (an ask rule covers it, or it "
    "cannot be checked)"
)


def _remembered(remember: tuple[tuple[str, str], ...]) -> str:
    """What "always" allows for the rest of the session, whole (it is approved too)."""
    shown = ", ".join(f"{kind} {visible(str(value))}" for kind, value in remember)
    return f"for this session: {shown}"
