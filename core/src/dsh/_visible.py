"""Text a model or a tool wrote, made safe to show at a terminal: control characters,
bidi controls and hidden characters written as escapes (``visible``), and the same in
JSON text as JSON escapes (``json_visible``: ``dsh run --json``, ``SessionEvent.to_json``).
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["JSON_ESCAPES", "json_visible", "visible"]

#: Control characters other than tab and newline, as escapes: text a model or a tool
#: wrote must not move the cursor, clear lines or retitle the terminal it is shown in;
#: nor reorder what is shown with the bidi embeddings, overrides and isolates (U+202A to
#: U+202E, U+2066 to U+2069: "Trojan Source"), shown as ``\\u202e``; nor hide text
#: in the tag characters (U+E0000 to U+E007F: invisible at a terminal, read by a model,
#: "ASCII smuggling"), shown as ``\\U000e0041``; nor break a line where no line break
#: shows (U+2028, U+2029) or hide itself (the zero-width space U+200B, the word joiner
#: and invisible operators U+2060 to U+2064, U+FEFF, the soft hyphen U+00AD). Letters
#: written right to left (Arabic, Hebrew) are shown as they are, and so are their
#: direction marks (U+200E, U+200F, U+061C) and the zero-width joiners (U+200C, U+200D)
#: of Persian words and emoji sequences.
_INVISIBLE: Final = (0x00AD, 0x200B, 0x2028, 0x2029, 0xFEFF)
_CONTROLS: dict[int, str] = (
    {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0)) if c not in (9, 10)}
    | {c: f"\\u{c:04x}" for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))}
    | {c: f"\\u{c:04x}" for c in (*_INVISIBLE, *range(0x2060, 0x2065))}
    | {c: f"\\U{c:08x}" for c in range(0xE0000, 0xE0080)}
)


def _json_escape(code: int) -> str:
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000  # beyond the BMP: JSON's escape is a surrogate pair
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


#: The same characters as JSON escapes, for JSON text shown as it is (``--json``): they
#: hide or reorder nothing there either, and the JSON reads back to the same text. A
#: JSON encoder escapes those below U+0020 itself; U+0085 is a line end to some readers.
JSON_ESCAPES: Final = {code: _json_escape(code) for code in _CONTROLS}
#: Any of them: the text is translated only when one is in it (most chunks of an
#: answer have none; a search is several times faster than ``translate`` on them).
_ANY_CONTROL = re.compile("[" + re.escape("".join(map(chr, _CONTROLS))) + "]")
#: The flags drawn with tag characters that emoji fonts have (England's, Scotland's,
#: Wales's: the black flag, "gb" and the region in tags, a cancel tag); any other text
#: in tags, after a black flag or not, is hidden text.
_FLAG = re.compile(
    "(\U0001f3f4\U000e0067\U000e0062(?:"
    + "|".join("".join(chr(0xE0000 + ord(c)) for c in region) for region in ("eng", "sct", "wls"))
    + ")\U000e007f)"
)


def visible(text: str) -> str:
    """``text`` with its control characters (escape sequences) shown as ``\\xNN``, its
    bidi controls as ``\\uNNNN`` and its tag characters as ``\\UNNNNNNNN`` (a Windows
    line end is a line end)."""
    text = text.replace("\r\n", "\n")
    if not _ANY_CONTROL.search(text):
        return text
    if _FLAG.search(text) is None:
        return text.translate(_CONTROLS)
    # England's, Scotland's and Wales's flags are drawn with tag characters: kept
    return "".join(
        part if index % 2 else part.translate(_CONTROLS)
        for index, part in enumerate(_FLAG.split(text))
    )


def json_visible(text: str) -> str:
    """JSON ``text`` with the characters ``visible`` escapes written as JSON escapes
    (``\\u202e``; a tag character as its surrogate pair): valid JSON, read back the
    same, shown at a terminal with nothing hidden or reordered."""
    return text.translate(JSON_ESCAPES) if _ANY_CONTROL.search(text) else text
