"""Bidi controls in what a model or a tool wrote ("Trojan Source"): at a terminal the
embeddings, overrides and isolates (U+202A to U+202E, U+2066 to U+2069) would show the
text after them reversed or moved; they are shown as escapes, in a streamed answer, in
the permission question and through ``dsh.commands.for_terminal``. Right-to-left
letters, wide and combining characters are shown as they are; so is a subdivision
flag, while other tag characters (U+E0000 to U+E007F, invisible text) are escaped."""

from __future__ import annotations

import io

import anyio
import pytest

from dsh._cli_approvals import TerminalApprovals
from dsh._render import Renderer
from dsh._visible import visible
from dsh.approvals import ApprovalRequest
from dsh.commands import for_terminal
from dsh.session import Session

BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
ESCAPED = "\\u202a\\u202b\\u202c\\u202d\\u202e\\u2066\\u2067\\u2068\\u2069"
#: Arabic, Hebrew, wide CJK, a combining accent, an emoji sequence, a right-to-left mark
AS_IT_IS = "مرحبا שלום 日本語 e\u0301 👩\u200d💻 a\u200fb"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_for_terminal_shows_bidi_controls_as_escapes() -> None:
    assert for_terminal(f"if admin {BIDI}x") == f"if admin {ESCAPED}x"
    assert for_terminal("a\x1b[2J\u202eb") == "a\\x1b[2J\\u202eb"


def test_right_to_left_wide_and_combining_text_is_as_it_is() -> None:
    assert for_terminal(AS_IT_IS) == AS_IT_IS
    assert for_terminal("x\r\ny") == "x\ny"  # a Windows line end is a line end, as before


def test_a_streamed_answer_at_a_terminal_shows_them_escaped() -> None:
    out = Terminal()
    renderer = Renderer(out, io.StringIO())
    session = Session("s")
    for text in ("access\u202e", "denied", f" {AS_IT_IS}\n"):
        data = {"kind": "text", "text": text}
        renderer.session_event(session, session._append("assistant/chunk", data))
    assert out.getvalue() == f"access\\u202edenied {AS_IT_IS}\n"


async def test_the_permission_question_shows_them_escaped(
    capsys: pytest.CaptureFixture[str],
) -> None:
    asked = ApprovalRequest(
        tool="bash",
        arguments='{"command": "rm -rf \u202e/ #"}',
        reason="the command 'rm -rf \u2066/ #' cannot be checked",
    )
    with anyio.move_on_after(0.1):
        await TerminalApprovals().tools_approval(asked)
    shown = capsys.readouterr().err
    assert not any(c in shown for c in BIDI), repr(shown)
    assert "rm -rf \\u202e/ #" in shown and "'rm -rf \\u2066/ #' cannot be checked" in shown


#: "hi" in tag characters (U+E0068, U+E0069): invisible at a terminal, read by a model
SMUGGLED = "\U000e0068\U000e0069"
#: Scotland's flag: the black flag, tag characters (gbsct), a cancel tag
SCOTLAND = "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"


def test_tag_characters_are_shown_as_escapes_but_a_subdivision_flag_is_a_flag() -> None:
    """Text hidden in tag characters ("ASCII smuggling") is shown, as ``\\UNNNNNNNN``;
    the tags of the three flags drawn with them (England's, Scotland's, Wales's) are
    kept, with anything around them still escaped."""
    assert for_terminal(f"ok{SMUGGLED}") == "ok\\U000e0068\\U000e0069"
    assert for_terminal(f"go {SCOTLAND}!") == f"go {SCOTLAND}!"
    assert for_terminal(f"{SCOTLAND}\x1b{SMUGGLED}{SCOTLAND}") == (
        f"{SCOTLAND}\\x1b\\U000e0068\\U000e0069{SCOTLAND}"
    )
    # a cancel tag alone, or other text in tags after a black flag, is hidden text
    assert for_terminal("\U000e007f") == "\\U000e007f"
    hidden = "\U0001f3f4\U000e0067\U000e0062\U000e0068\U000e0069\U000e007f"
    assert (
        for_terminal(hidden) == "\U0001f3f4\\U000e0067\\U000e0062\\U000e0068\\U000e0069\\U000e007f"
    )


def test_invisible_line_breaks_direction_marks_and_zero_width_spaces_are_escapes() -> None:
    """U+2028/U+2029 (a line break where none shows) and the invisible characters were
    shown as they are; the direction marks and the joiners of Persian words and emoji
    sequences still are."""
    hidden = "r\u200bm \u2028x\u2029 \u2060\ufeff\u00ad"
    assert visible(hidden) == "r\\u200bm \\u2028x\\u2029 \\u2060\\ufeff\\u00ad"
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    family += " \u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"  # Persian, with a ZWNJ
    assert visible(family) == family
