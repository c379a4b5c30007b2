"""What ``dsh run`` and ``dsh chat`` show: a session-event observer that writes the
assistant's text as it streams, tool calls and results in one line each, and how each
turn ended. With ``json`` every event is one JSON line instead (for scripts)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TextIO

from dsh.hookspecs import hookimpl

if TYPE_CHECKING:
    from dsh.session import Session, SessionEvent

__all__ = ["Renderer", "shorten"]

_PREVIEW = 100


def shorten(text: str, limit: int = _PREVIEW) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class Renderer:
    """Registered as plugin ``dsh-cli`` by the command line; watches one session."""

    def __init__(self, out: TextIO, err: TextIO, *, json: bool = False) -> None:
        self.out = out
        self.err = err
        self.json = json
        self.session_id: str | None = None
        self.last_end: dict[str, Any] | None = None
        self._mid_line = False

    @hookimpl
    def session_event(self, session: Session, event: SessionEvent) -> None:
        if self.session_id is not None and session.id != self.session_id:
            return
        if self.json:
            self.out.write(event.to_json() + "\n")
            self.out.flush()
        else:
            self._show(event.type, event.data)
        if event.type == "turn/end":
            self.last_end = event.data

    def _show(self, kind: str, data: dict[str, Any]) -> None:
        if kind == "assistant/chunk" and data.get("kind") == "text":
            self.out.write(data["text"])
            self.out.flush()
            self._mid_line = not data["text"].endswith("\n")
            return
        if kind == "tool/call":
            self._note(f"→ {data['name']}({shorten(data['arguments'], 60)})")
        elif kind == "tool/result":
            mark = "✗" if data["is_error"] else "←"
            lines = data["content"].count("\n") + 1
            self._note(f"{mark} {data['name']}: {shorten(data['content'])} ({lines} lines)")
        elif kind == "step/retry":
            self._note(f"↻ retrying the model call ({data['code']}: {shorten(data['message'])})")
        elif kind == "turn/end":
            usage = data.get("usage", {})
            tokens = f"{usage.get('input_tokens', 0)} in / {usage.get('output_tokens', 0)} out"
            line = f"[turn {data['turn']} {data['reason']} · {tokens} tokens]"
            error = data.get("error")
            if error:
                line += f" {error['code']}: {error['message']}"
            self._note(line)

    def _note(self, line: str) -> None:
        if self._mid_line:
            self.out.write("\n")
            self.out.flush()
            self._mid_line = False
        self.err.write(line + "\n")
        self.err.flush()
