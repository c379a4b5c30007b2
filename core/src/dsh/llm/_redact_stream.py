"""Hiding the model API keys in a text as it streams.

A server or a proxy may write the key into the answer (its text, its reasoning, a tool
call's arguments); the answer is logged as it streams (``assistant/chunk``, then
``assistant/message``), so the HTTP adapters hide it before the chunks leave them, as
``dsh._secrets.redact`` hides it in a tool's result: each occurrence, and each run of
at least half of it that begins or ends it.

A key may be split across chunks, so a piece cannot be redacted alone. A
``StreamRedactor`` shows at once all of the text but its longest tail that could still
grow into a hidden run (a piece of a key that may go on), which it holds until the next
piece tells, or until the text ends: usually nothing is held, and the text comes
through as it came. Held text is never lost: what a stream shows, put together, is the
whole text, redacted. An answer's chunks go through one for each of its texts
(``dsh.llm._redact_answer``).
"""

from __future__ import annotations

from typing import Final, final

from dsh._secrets import HIDDEN, MIN_LENGTH, hidden_runs, shortest_run
from dsh.llm._redact_json import escape_start, out_of_escapes

__all__ = ["SHORTEST_HELD", "StreamRedactor"]

#: A tail shorter than this is shown even when it is a piece of a key: keys are random,
#: so most characters are in one, and holding one-character tails would delay a third
#: of all chunks. What is shown is remembered (``StreamRedactor``), so at most this
#: less one characters of a key show before the rest of it is hidden.
SHORTEST_HELD: Final = 3


@final
class StreamRedactor:
    """One text that arrives in pieces: ``feed`` each piece, get what can be shown now,
    redacted; ``flush`` for what is held, when the text ends or something else must come
    out after what it has shown so far.

    The last characters shown (as many as the longest secret has) are kept as they
    came, even by ``flush``: a run that began in them is hidden in what follows, and a
    tail that goes on from them is held as if they were still there. At most
    ``2 * len(longest secret)`` characters are held: a longer stretch of runs that
    overlap (text made of a key's pieces over and over) is hidden in parts.

    ``json``: the text is JSON (a tool call's arguments): each run is hidden from and to
    escapes' ends, and the text is never cut inside an escape (``out_of_escapes``,
    ``escape_start``), so no ``\\`` is left before a ``***``. ``hid``: it hid a run."""

    __slots__ = (
        "_held",
        "_json",
        "_keep",
        "_latest",
        "_marks",
        "_most",
        "_open",
        "_secrets",
        "_seen",
        "hid",
    )

    def __init__(self, secrets: tuple[str, ...], *, json: bool = False) -> None:
        self._secrets = secrets  # longest first
        self._json = json
        self._keep = max(map(len, secrets), default=0)
        self._most = 2 * self._keep
        # each secret with where in it a hidden run can begin at the latest
        self._latest = tuple((secret, len(secret) - shortest_run(secret)) for secret in secrets)
        # what a text holds if it holds a hidden run: each secret's first and last half
        self._marks = tuple(
            {m for s in secrets for m in (s[: shortest_run(s)], s[-shortest_run(s) :])}
        )
        self._held = ""  # text not shown yet
        self._seen = ""  # the last characters shown, unredacted
        self._open = False  # what was shown ends with a *** whose run may go on
        self.hid = False

    def feed(self, piece: str) -> str:
        text = self._held + piece if self._held else piece
        if not text:
            return ""
        seen = self._seen
        whole = seen + text if seen else text
        spans = self._spans(whole)
        cut = self._cut(whole, spans)
        if cut <= len(seen):
            self._held = text
            return ""
        self._held = whole[cut:] if cut < len(whole) else ""
        return self._show(whole, len(seen), cut, spans)

    def flush(self) -> str:
        """What is held, redacted; what was shown is still remembered (the text may go
        on, as text a tool call's piece interrupted goes on)."""
        text, self._held = self._held, ""
        if not text:
            return ""
        whole = self._seen + text
        return self._show(whole, len(self._seen), len(whole), self._spans(whole))

    def release(self) -> str:
        """What is held, redacted, as ``flush`` gives it, unless it may be a piece of a
        key of ``MIN_LENGTH`` characters or more (with what was shown before it): the
        end of a word that is also in a key comes out where it was, and what is likely
        a key's stays held (``dsh.llm._redact_answer.AnswerRedactor``: the block ends, the
        text goes on)."""
        if not self._held:
            return ""
        whole = self._seen + self._held
        if len(whole) - _held_from(whole, self._latest) >= MIN_LENGTH:
            return ""
        return self.flush()

    def _spans(self, whole: str) -> list[tuple[int, int]]:
        """The hidden runs of ``whole``, by start (none, usually: no half of a secret)."""
        for mark in self._marks:
            if mark in whole:
                break
        else:
            return []
        spans = sorted(span for secret in self._secrets for span in hidden_runs(whole, secret))
        return out_of_escapes(whole, spans) if self._json else spans

    def _cut(self, whole: str, spans: list[tuple[int, int]]) -> int:
        """Where ``whole`` is cut in what is shown now and what is held: before the tail
        ``_held_from`` finds, and before the stretch of overlapping hidden runs the cut
        would split (a run that ended in that tail: in two, each part might be too short
        to hide), but no more than ``_most`` characters before the end (the part of a
        run before the cut is then hidden, ``_show``)."""
        cut = _held_from(whole, self._latest)
        if cut < len(whole) and spans:
            region_start, region_end = spans[0]
            for start, end in spans:  # by start: the stretches of overlapping runs
                if start >= region_end:
                    if region_start < cut < region_end or start >= cut:
                        break
                    region_start = start
                region_end = max(region_end, end)
            if region_start < cut < region_end:
                cut = region_start
        cut = max(cut, len(whole) - self._most)
        return escape_start(whole, cut) if self._json else cut

    def _show(self, whole: str, after: int, cut: int, spans: list[tuple[int, int]]) -> str:
        """What ``whole[after:cut]`` shows, ``whole[:after]`` having been shown: each run
        of ``whole`` hidden, as far as it is in there (overlapping runs as one ``***``,
        and so a run that goes on from the ``***`` shown last)."""
        shown = whole[:cut]
        # JSON: from an escape's start, so the next text's escapes are read as they are
        keep = escape_start(whole, max(0, cut - self._keep)) if self._json else -self._keep
        self._seen = shown[keep:]
        parts: list[str] = []
        done = after
        for start, end in spans:
            if start >= cut:
                break
            if end <= after:
                continue
            if start > done or not (parts or self._open):
                parts += (whole[done : max(start, after)], HIDDEN)
            elif not parts:
                parts.append("")  # the run goes on from the *** shown last
            done = max(done, min(end, cut))
        self._open = done == cut and bool(parts)
        if not parts:
            return shown[after:]  # the usual case: no run of a secret
        self.hid = True
        parts.append(whole[done:cut])
        return "".join(parts)


def _held_from(text: str, latest: tuple[tuple[str, int], ...]) -> int:
    """Where the longest tail of ``text`` starts that is a piece of a secret from which
    a hidden run can still grow (one that begins at most ``len - shortest_run`` into
    the secret: it may go on to the secret's start or to at least half of it to its
    end), of ``SHORTEST_HELD`` characters or more; ``len(text)`` if there is none."""
    size = len(text)
    end = text[-SHORTEST_HELD:]
    if len(end) < SHORTEST_HELD:
        return size
    longest = 0
    for secret, last in latest:
        if end not in secret:
            continue  # the usual case: no tail of text is a piece of this secret
        found = secret.find(end)
        while found != -1:  # each place the tail's end is in the secret: how far back
            stop = found + SHORTEST_HELD  # it goes on like the secret before that end
            start = found
            while start > 0 and stop - start < size and text[start - stop - 1] == secret[start - 1]:
                start -= 1
            if start <= last:
                longest = max(longest, stop - start)
            found = secret.find(end, found + 1)
    return size - longest
