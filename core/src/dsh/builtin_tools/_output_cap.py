"""The ``bash`` tool's output cap: the first and last halves of what a command printed
are kept, and no piece of a secret or of a word the cut goes through is shown."""

from __future__ import annotations

from collections.abc import Collection
from typing import Final

__all__ = ["HeadTail"]

#: The bytes of a word the cap may cut through (keys and tokens are made of them); the
#: bytes of non-ASCII characters too (letters, mostly), not those UTF-8 never holds
#: (0xC0, 0xC1, 0xF5-0xFF: binary output, shown as U+FFFD, is no word).
_WORD_CHARS: Final = (
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.+/=~"
    + bytes(range(0x80, 0xC0))
    + bytes(range(0xC2, 0xF5))
)
_WORD: Final = frozenset(_WORD_CHARS)
#: At most this many bytes of a cut word are left out (more for a longer secret).
_WORD_MOST: Final = 512


def _whole_characters(data: bytes) -> int:
    """The length of ``data`` less a UTF-8 character cut short at its end."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte < 0x80 or 0xC0 <= byte < 0xC2 or byte > 0xF4:
            return len(data)  # ASCII, or a byte UTF-8 never holds (shown as U+FFFD)
        if byte >= 0xC2:  # the first byte of a character of 2, 3 or 4 bytes
            size = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return len(data) - back if size > back else len(data)
    return len(data)


def _first_character(data: bytes) -> int:
    """Where the first character of ``data`` starts: past the end of one cut short."""
    start = 0
    while start < min(3, len(data)) and 0x80 <= data[start] < 0xC0:
        start += 1
    return start


def _secret_end(head: bytes, after: int, secrets: Collection[bytes]) -> int:
    """The length of the longest start of a secret that ``head`` ends with and that the
    byte ``after`` goes on like the secret (0: none)."""
    longest = 0
    for secret in secrets:
        # from the longest down: the first start of the secret ``head`` ends with
        for size in range(min(len(secret) - 1, len(head)), longest, -1):
            if secret[size] == after and head.endswith(secret[:size]):
                longest = size
                break
    return longest


def _secret_start(tail: bytes, before: int, secrets: Collection[bytes]) -> int:
    """The length of the longest end of a secret that ``tail`` starts with, the byte
    ``before`` coming before it in the secret (0: none)."""
    longest = 0
    for secret in secrets:
        for size in range(min(len(secret) - 1, len(tail)), longest, -1):
            if secret[-size - 1] == before and tail.startswith(secret[-size:]):
                longest = size
                break
    return longest


class HeadTail:
    """Keeps the first and the last ``limit // 2`` bytes of a stream and its length;
    ``secrets``: the values of which no piece the cut goes through may be shown."""

    __slots__ = (
        "after_head",
        "before_tail",
        "half",
        "head",
        "most",
        "secrets",
        "tail",
        "total",
    )

    def __init__(self, limit: int, secrets: Collection[str] = ()) -> None:
        self.half = limit // 2
        self.secrets = [secret.encode() for secret in secrets if secret]
        self.most = max([_WORD_MOST, *map(len, self.secrets)])
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self.after_head = -1  # the first byte cut out (-1: none yet)
        self.before_tail = -1  # the last byte cut out

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self.half - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            if self.after_head < 0:
                self.after_head = data[0]
            self.tail += data
            over = len(self.tail) - self.half
            if over > 0:
                self.before_tail = self.tail[over - 1]
                del self.tail[:over]

    def text(self) -> str:
        if self.total == len(self.head) + len(self.tail):
            return (self.head + self.tail).decode("utf-8", "replace")
        # No piece of a secret the cut goes through is shown (redact hides only pieces
        # of half of one or more): the piece is left out, whatever bytes it holds. A
        # word the cut goes through is left out whole too, up to the longest secret's
        # length: a token or a key that is no known secret is not shown in part either.
        # Then each cut goes back to a character's start.
        head, tail = bytes(self.head), bytes(self.tail)
        drop = _secret_end(head, self.after_head, self.secrets)
        if self.after_head in _WORD:
            drop = max(drop, min(len(head) - len(head.rstrip(_WORD_CHARS)), self.most))
        head = head[: len(head) - drop]
        drop = _secret_start(tail, self.before_tail, self.secrets)
        if self.before_tail in _WORD:
            drop = max(drop, min(len(tail) - len(tail.lstrip(_WORD_CHARS)), self.most))
        tail = tail[drop:]
        head, tail = head[: _whole_characters(head)], tail[_first_character(tail) :]
        cut = self.total - len(head) - len(tail)
        return (
            f"{head.decode('utf-8', 'replace')}\n[... {cut} bytes of output cut here: "
            f"showing the first {len(head)} and the last {len(tail)} bytes ...]\n"
            f"{tail.decode('utf-8', 'replace')}"
        )
