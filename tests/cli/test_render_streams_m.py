"""What the renderer shows in a terminal, beyond test_render_m.py (found by a mutation
review): exactly which characters ``visible()`` escapes (C0 but tab and newline, DEL,
C1; not the printable Latin-1 above), a carriage return held back from the end of a
chunk is given back once, and an output that cannot say whether it is a terminal is
not one."""

from __future__ import annotations

import io
from typing import Any

from dsh._render import Renderer
from dsh._visible import visible
from dsh.session import Session


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def answer(renderer: Renderer, *events: tuple[str, dict[str, Any]]) -> None:
    session = Session("s")
    for kind, data in events:
        renderer.session_event(session, session._append(kind, data))


def chunk(text: str) -> tuple[str, dict[str, Any]]:
    return "assistant/chunk", {"kind": "text", "text": text}


def test_visible_escapes_c0_del_and_c1_and_nothing_else() -> None:
    escaped = [c for c in range(0x100) if visible(chr(c)) != chr(c)]
    controls = [c for c in (*range(0x20), 0x7F, *range(0x80, 0xA0)) if c not in (9, 10)]
    assert escaped == [*controls, 0xAD]  # and the soft hyphen, which shows nothing
    assert visible("\x00\x1f\x7f\x80\x9b\x9f") == "\\x00\\x1f\\x7f\\x80\\x9b\\x9f"
    assert visible("tab\there\nnbsp\xa0é\r\n") == "tab\there\nnbsp\xa0é\n"


def test_a_held_carriage_return_is_given_back_once() -> None:
    out = Terminal()
    answer(Renderer(out, io.StringIO()), chunk("a\r"), chunk("b"), chunk("c"))
    assert out.getvalue() == "a\\x0dbc"


class NoTty:
    """An output with no ``isatty`` (a program's own writer)."""

    def __init__(self) -> None:
        self.written: list[str] = []

    def write(self, text: str) -> int:
        self.written.append(text)
        return len(text)

    def flush(self) -> None:
        pass


def test_an_output_that_cannot_say_is_not_a_terminal() -> None:
    closed = io.StringIO()
    closed.close()  # isatty() raises ValueError
    assert Renderer(closed, io.StringIO()).terminal is False  # type: ignore[arg-type]
    out = NoTty()
    renderer = Renderer(out, io.StringIO())  # type: ignore[arg-type]
    assert renderer.terminal is False
    answer(renderer, chunk("raw\x1b[1m"))
    assert out.written == ["raw\x1b[1m"]


def test_a_carriage_return_ending_an_answer_stays_in_its_turn() -> None:
    out, err = Terminal(), io.StringIO()
    end = ("turn/end", {"turn": 1, "reason": "completed", "usage": {}})
    answer(Renderer(out, err), chunk("abc\r"), end, chunk("Hi"))
    assert out.getvalue().endswith("\nHi")  # the next answer starts on its own
