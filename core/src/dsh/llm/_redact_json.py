"""Hiding the secrets in a tool call's arguments as they stream: JSON text.

A string in JSON may write any character as an escape (``\\u0073`` for ``s``, upper- or
lower-case hex; ``\\/`` for ``/``, as some encoders do), and a model or a server may: a
key so spelled would pass a redactor looking for its characters, and reach the tool and
the session log one decode away. So the arguments are first written the one way
``json.dumps(..., ensure_ascii=False)`` writes a secret's characters: each escape of a
character that is in a secret becomes that character (``\\"``, ``\\\\`` and the control
characters' escapes for those), ``\\/`` a ``/`` if a secret has one; then the secrets,
and their JSON spellings (a ``"`` in one is always escaped), are hidden as in any text
(``dsh.llm._redact_stream.StreamRedactor``). The JSON means what it meant, less the
secrets: ``***`` in a key's place, as for a key written plainly (and the call is not
run: ``dsh.llm._hidden_args``).
Other escapes pass as they came; a hidden run that begins or ends inside one is hidden
from and to its ends (``out_of_escapes``), and the text is never cut inside one
(``escape_start``): no ``\\`` is left before a ``***``. A piece that ends in an
escape not whole yet (``\\u00``) holds it until the next piece or the end. Not caught:
a character beyond U+FFFF written as two escapes (a surrogate pair), a key cut into
strings the tool joins.

A server's text quoted in an error (a body or a chunk that could not be read) goes
through ``quotable``: JSON re-written as ``json.dumps(..., ensure_ascii=False)`` writes
it, other text with the escapes of the secrets' characters written plainly, then the
secrets hidden.

A provider's own block (``ProviderBlockChunk``: an Anthropic server tool's call, whose
input the model wrote, or its results) comes whole and decoded: ``hidden_in`` hides the
secrets in each of its strings (keys too), as ``dsh.redact`` does, and gives the very
object back when there is none, as there usually is.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final, final

from dsh._secrets import redact

__all__ = [
    "JsonEscapes",
    "escape_start",
    "hidden_in",
    "json_secrets",
    "out_of_escapes",
    "quotable",
    "quoted_start",
]

#: An escape, whole or cut off at the end: ``\uXXXX`` (fewer hex digits when cut),
#: ``\`` and one character, or a ``\`` alone at the end.
_ESCAPE: Final = re.compile(r"\\(u[0-9a-fA-F]{0,4}|.)?", re.S)
#: Characters of a server's text (a body, a chunk) that an error quotes.
QUOTED: Final = 200


def json_secrets(secrets: tuple[str, ...]) -> tuple[tuple[str, ...], frozenset[str]]:
    """The secrets with their JSON spellings (longest first) and the characters they
    have: what hides them in JSON text (a ``StreamRedactor`` of the first after a
    ``JsonEscapes`` of the second), the same for every call of an answer."""
    spelled = {secret for s in secrets for secret in (s, _spelling(s))}
    chars = frozenset("".join(secrets))
    return tuple(sorted(spelled, key=len, reverse=True)), chars


@final
class JsonEscapes:
    """One tool call's arguments, with the escapes of the secrets' characters written
    as the secrets' JSON spellings have them: ``feed`` each piece, get the text to
    redact; ``flush`` for an escape cut off at the end, when the answer ends."""

    __slots__ = ("_chars", "tail")

    def __init__(self, chars: frozenset[str]) -> None:
        self._chars = chars
        #: an escape cut off at the end of the last piece, held for the next
        self.tail = ""

    def feed(self, piece: str) -> str:
        text = self.tail + piece if self.tail else piece
        if "\\" not in text:  # the usual case: no escape at all
            self.tail = ""
            return text
        return self._plain(text)

    def flush(self) -> str:
        rest, self.tail = self.tail, ""
        return rest

    def _plain(self, text: str) -> str:
        """``text`` with the escapes of the secrets' characters written as a secret's
        JSON spelling has them; an escape cut off at its end held in ``tail``."""
        self.tail = ""
        chars = self._chars
        parts: list[str] = []
        done = 0
        for match in _ESCAPE.finditer(text):
            body = match.group(1)
            if body is None or (body[0] == "u" and len(body) < 5):
                if match.end() == len(text):  # cut off: the next piece tells
                    self.tail = text[match.start() :]
                    parts.append(text[done : match.start()])
                    return "".join(parts)
                continue  # not JSON: passed as it came
            if body == "/":
                if "/" not in chars:
                    continue
                written = "/"
            elif body[0] == "u":
                char = chr(int(body[1:], 16))
                if char not in chars:
                    continue
                written = _spelling(char)
            else:
                continue
            parts += (text[done : match.start()], written)
            done = match.end()
        if not parts:
            return text
        parts.append(text[done:])
        return "".join(parts)


def out_of_escapes(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` (hidden runs of ``text``, by start) with each edge moved out to an
    escape's end: a start inside one back to its backslash, an end inside one on to its
    end. A run cut at an escape's letter would leave a ``\\`` before ``***``, not JSON;
    hiding more is safe. ``text`` is taken to begin outside an escape."""
    if "\\" not in text:  # the usual case: no escape to cut
        return spans
    escapes = [match.span() for match in _ESCAPE.finditer(text)]
    moved: list[tuple[int, int]] = []
    for start, end in spans:
        for first, last in escapes:
            if first >= end:
                break
            if first < start < last:
                start = first
            if first < end < last:
                end = last
        moved.append((start, end))
    return sorted(moved)


def escape_start(text: str, at: int) -> int:
    """``at``, or the start of the escape of ``text`` it is inside: where JSON text may
    be cut (what is shown never ends in an escape a later run could begin in)."""
    if "\\" not in text:
        return at
    for match in _ESCAPE.finditer(text):
        first, last = match.span()
        if first >= at:
            break
        if at < last:
            return first
    return at


def _spelling(text: str) -> str:
    """``text`` as it is written in a JSON string (``json.dumps``, without quotes)."""
    return json.dumps(text, ensure_ascii=False)[1:-1]


def hidden_in(value: Any, secrets: tuple[str, ...]) -> Any:
    """``value`` (decoded JSON: dicts, lists, strings...) with ``secrets`` hidden from
    each string in it, the keys of its dicts too; ``value`` itself if none has one."""
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, dict):
        pairs = [(hidden_in(k, secrets), hidden_in(v, secrets)) for k, v in value.items()]
        if all(k is old and v is value[old] for (k, v), old in zip(pairs, value, strict=True)):
            return value
        return dict(pairs)
    if isinstance(value, list):
        items = [hidden_in(item, secrets) for item in value]
        if all(new is old for new, old in zip(items, value, strict=True)):
            return value
        return items
    return value


def quotable(text: str, secrets: tuple[str, ...]) -> str:
    """``text`` (a server's, to quote) with ``secrets`` hidden, also where written with
    JSON escapes: a JSON text re-written with none but the ones it needs (a surrogate
    pair too), anything else (a JSON text cut short) with those of the secrets'
    characters written plainly."""
    secrets = tuple(secret for secret in secrets if secret)
    if not secrets:
        return text
    try:
        text = json.dumps(json.loads(text), ensure_ascii=False)
    except (ValueError, RecursionError):
        return escapes_hidden(text, secrets)
    return redact(text, json_secrets(secrets)[0])


def escapes_hidden(text: str, secrets: tuple[str, ...]) -> str:
    """``text`` (a server's words, not JSON) with ``secrets`` hidden, also where written
    with JSON escapes: those of the secrets' characters written plainly first."""
    secrets = tuple(secret for secret in secrets if secret)
    if not secrets:
        return text
    spelled, chars = json_secrets(secrets)
    escapes = JsonEscapes(chars)
    return redact(escapes.feed(text) + escapes.flush(), spelled)


def quoted_start(text: str, secrets: tuple[str, ...], *, cut: str = "") -> str:
    """The start of ``text`` (a server's) as an error quotes it: ``quotable``, its
    first ``QUOTED`` characters written with ``repr``, then ``cut`` if there was more.
    The secrets are hidden before the cut: a cut could split a key, and leave a piece
    of it that no longer matches."""
    shown = quotable(text, secrets)
    return f"{shown[:QUOTED]!r}{cut if len(shown) > QUOTED else ''}"
