"""Why an API key cannot be sent: the character an HTTP header cannot hold."""

from __future__ import annotations

__all__ = ["unsendable"]


def unsendable(key: str) -> str:
    """Why ``key`` cannot be sent in an HTTP header (which holds printable ASCII only; the
    HTTP client refuses anything else, quoting the key): the place and kind of its first
    such character, never the key."""
    import unicodedata

    at = next(i for i, c in enumerate(key) if not ("!" <= c <= "~"))
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
    return (
        f"cannot be sent: its character {at + 1} (of {len(key)}) is {what}; an HTTP header "
        "holds printable ASCII only (a key pasted across lines?)"
    )
