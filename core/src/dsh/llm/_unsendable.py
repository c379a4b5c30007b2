"""Why an API key cannot be sent: the character an HTTP header cannot hold."""

from __future__ import annotations

__all__ = ["unsendable", "unsendable_part"]


def unsendable_part(key: str) -> str | None:
    """The place and kind of the first character of ``key`` an HTTP header cannot hold
    (it holds printable ASCII only, no space; the HTTP client refuses anything else,
    quoting the key), as ``its character 5 (of 6) is a line break``, never the key; None
    when it can be sent. The one check: ``dsh run``'s requests and ``dsh models``."""
    import unicodedata

    at = next((i for i, c in enumerate(key) if not ("!" <= c <= "~")), None)
    if at is None:
        return None
    char = key[at]
    if char in "\r\n":
        what = "a line break"
    elif char == "\t":
        what = "a tab"
    elif char == " ":
        what = "a space"
    elif char.isascii():
        what = f"a control character (U+{ord(char):04X})"
    else:
        name = unicodedata.name(char, "")
        what = f"U+{ord(char):04X}{' ' + name if name else ''}, which is not ASCII"
    return f"its character {at + 1} (of {len(key)}) is {what}"


def unsendable(key: str) -> str:
    """Why ``key``, which ``unsendable_part`` refuses, cannot be sent in an HTTP header."""
    return (
        f"cannot be sent: {unsendable_part(key)}; an HTTP header "
        "holds printable ASCII only (a key pasted across lines?)"
    )
