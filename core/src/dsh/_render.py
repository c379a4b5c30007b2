"""What ``dsh run`` and ``dsh chat`` show: a session-event observer that writes the
assistant's text as it streams, tool calls and results in one line each, and how each
turn ended. With ``json`` every event is one JSON line instead (for scripts).

When the reader of the output goes away (``dsh run --json hi | head -5``), the renderer
stops writing and calls ``on_closed`` (the command then ends quietly, status 141 as if
killed by SIGPIPE)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

from dsh._visible import visible
from dsh.builtin_tools._bash_result import NO_OUTPUT_RESULT
from dsh.hookspecs import hookimpl

if TYPE_CHECKING:
    from dsh.agent import Agent
    from dsh.session import Session, SessionEvent
    from dsh.tools import ToolRegistry

__all__ = ["CLOSED_STATUS", "STEERED", "Renderer", "discard", "shorten"]

_PREVIEW = 100
_ERROR_PREVIEW = 400  # an error's reason (which rule, which command) is the point of it

#: The exit status of a command whose output was closed: 128 + SIGPIPE, as a shell shows
#: for a writer that the signal killed.
CLOSED_STATUS = 141

#: What marks the person's steer (a line sent while the turn runs), before its text.
STEERED = "↪ steered by you: "


def discard(stream: TextIO) -> None:
    """Point ``stream``'s file descriptor at /dev/null: its reader went away, and what is
    still buffered (flushed at exit) or written later must not fail again."""
    try:
        fd = stream.fileno()
    except (OSError, ValueError):  # not a real file (a test's capture): nothing to do
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def shorten(text: str, limit: int = _PREVIEW) -> str:
    flat = visible(" ".join(text.split()))
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _code_words(code: str, message: str) -> str:
    """An error said: ``CODE: message``, or the code alone when it has no message."""
    return f"{code}: {message}" if message else code


#: by compact/end outcome (``dropped``: a refused summary's fallback, its warning says why)
_COMPACTED = {"summarized": "summarised", "pruned": "pruned", "dropped": "cut"}


class Renderer:
    """Registered as plugin ``dsh-cli`` by the command line; watches one session."""

    def __init__(self, out: TextIO, err: TextIO, *, json: bool = False) -> None:
        self.out = out
        self.err = err
        self.json = json
        #: The answer goes to a terminal: its control characters are shown, not obeyed.
        self.terminal = not json and _is_terminal(out)
        self.session_id: str | None = None
        self.last_end: dict[str, Any] | None = None
        #: How many turns of the watched session ended with reason ``error`` (``dsh chat``
        #: from a pipe or a file exits 1 after one).
        self.errored_turns = 0
        #: True once a write failed because the reader went away; nothing is written then.
        self.closed = False
        #: Why writing the output failed otherwise (ENOSPC, EIO); nothing is written then.
        self.failed: OSError | None = None
        #: Called once when the output is closed (e.g. to cancel the turn).
        self.on_closed: Callable[[], None] | None = None
        #: Errors met by agents outside a turn's log (a failed flush: the session was not
        #: saved). They are logged by the core; the command exits non-zero for them.
        self.agent_errors: list[BaseException] = []
        #: Steers the person was shown as sent (chat's line editor marks the line sent):
        #: taken into the turn, each only ends a streamed line (the rest are dropped at
        #: the turn's end: cancelled, or left for the next turn).
        self.steers_shown: list[str] = []
        #: The harness's tools: an error result of a plugin's tool names the plugin.
        self.tools: ToolRegistry | None = None
        self._mid_line = False
        self._held_cr = False
        self._cut_off = False  # the last compact/summary's answer hit its output limit

    @hookimpl
    def agent_error(self, agent: Agent, error: BaseException) -> None:
        self.agent_errors.append(error)

    @hookimpl
    def session_event(self, session: Session, event: SessionEvent) -> None:
        if self.session_id is not None and session.id != self.session_id:
            return
        if event.type == "turn/end":
            self.last_end = event.data
            if event.data.get("reason") == "error":
                self.errored_turns += 1
        if self.json:
            self._guarded(lambda: self._write(self.out, event.to_json(session.id) + "\n"))
        else:
            self._guarded(lambda: self._show(event.type, event.data))

    def _guarded(self, show: Callable[[], object]) -> None:
        """``show()`` unless the output is closed; a write that fails closes it."""
        if self.closed:
            return
        try:
            show()
        except BrokenPipeError:
            self.closed = True
            if self.on_closed is not None:
                self.on_closed()
        except OSError as error:  # a full disk, an I/O error: the output is lost
            self.closed = True
            self.failed = error
            discard(self.out)  # what is left in its buffer must not fail (and be said) again
            print(f"dsh: error: cannot write the output: {error}", file=self.err)
            if self.on_closed is not None:
                self.on_closed()

    def _write(self, stream: TextIO, text: str) -> None:
        try:
            stream.write(text)
            stream.flush()
        except BrokenPipeError:
            discard(stream)
            raise

    def _show(self, kind: str, data: dict[str, Any]) -> None:
        if kind == "assistant/chunk" and data.get("kind") == "text":
            text = data["text"]
            if self.terminal:  # a "\r\n" may come split over two chunks
                text, self._held_cr = ("\r" if self._held_cr else "") + text, False
                if text.endswith("\r"):
                    text, self._held_cr = text[:-1], True
                text = visible(text)
            self._write(self.out, text)
            self._mid_line = not text.endswith("\n")
            return
        if kind == "tool/call":
            self._note(f"→ {data['name']}({shorten(data['arguments'], 60)})")
        elif kind == "tool/result":
            content = data["content"]
            if data["is_error"]:
                whose = self._whose(data["name"])
                self._note(f"✗ {data['name']}{whose}: {shorten(content, _ERROR_PREVIEW)}")
            else:
                lines = content.count("\n") + 1
                # bash's result for a command that printed nothing: no lines to count
                counted = lines > 1 and not NO_OUTPUT_RESULT.fullmatch(content)
                size = f" ({lines} lines)" if counted else ""  # the preview shows one
                self._note(f"← {data['name']}: {shorten(content)}{size}")
        elif kind == "steering/message":  # taken into the turn: also ends a streamed line
            content = data["content"]
            if data.get("source") == "plugin":
                self._note(f"↪ steered by a plugin: {shorten(content)}")
            elif content in self.steers_shown:
                self.steers_shown.remove(content)
                self._end_line()
            else:
                self._note(STEERED + shorten(content))
        elif (
            kind == "compact/end"
            and data.get("outcome") in _COMPACTED
            and data.get("reason") != "manual"
        ):
            # dsh-compaction's automatic ones (failures are warnings it logs itself;
            # chat's /compact answers for a manual one)
            before, after = data.get("tokens_before", 0), data.get("tokens_after", 0)
            how = _COMPACTED[data["outcome"]]
            note = f"↻ history {how} ({data.get('reason')}): {before:,} → {after:,} tokens"
            if data["outcome"] == "summarized" and self._cut_off:
                note += " (summary cut off at max_summary_tokens)"
            elif data["outcome"] == "dropped":
                note += " (older messages dropped without a summary)"
            self._note(note)
        elif kind == "compact/summary":  # its compact/end follows: the note says it then
            self._cut_off = data.get("truncated") is True
        elif kind == "step/retry":
            wait = data.get("wait")
            when = f" in {wait:g} s" if isinstance(wait, int | float) and wait > 0 else ""
            why = _code_words(data["code"], shorten(data["message"]))
            self._note(f"↻ retrying the model call{when} ({why})")
        elif kind == "turn/end":
            self._held_cr = False  # a lone "\r" ending the answer: nothing to show
            self.steers_shown.clear()
            usage = data.get("usage", {})
            tokens = f"{usage.get('input_tokens', 0)} in / {usage.get('output_tokens', 0)} out"
            line = f"[turn {data['turn']} {data['reason']} · {tokens} tokens]"
            error = data.get("error")
            if error:
                line += f" {_code_words(error['code'], error['message'])}"
            elif data.get("stopped"):  # a plugin's reason for ending it
                line += f" stopped: {data['stopped']}"
            self._note(line)

    def _whose(self, tool: str) -> str:
        """`` (plugin NAME)`` for a tool a plugin registered; "" for dsh's own, or one
        this harness does not have."""
        from dsh.plugins import CORE_DEFAULTS

        if self.tools is None or self.tools.get(tool) is None:
            return ""
        plugin = self.tools.origin(tool)
        return "" if plugin in CORE_DEFAULTS else f" (plugin {plugin})"

    def _note(self, line: str) -> None:
        line = visible(line)  # a tool's name, a server's error: not the terminal's commands
        self._end_line()
        self._write(self.err, line + "\n")

    def end_line(self) -> bool:
        """End the answer's streamed line, if it is unfinished (before a line of one's
        own on stderr: chat's note on what Ctrl-C did); whether it was."""
        ended = self._mid_line and not self.closed
        self._guarded(self._end_line)
        return ended

    def end_terminal_line(self) -> bool:
        """``end_line``; whether it ended one on a terminal (the one stderr's notes are
        on, as a rule), so that a note written now needs no newline first."""
        return self.end_line() and self.terminal

    def _end_line(self) -> None:
        if self._mid_line:
            self._mid_line = False
            self._write(self.out, "\n")


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # closed, or not a real stream
        return False
