"""How an error quotes a value it names (``shown``: keys hidden, long values cut),
suggests the name meant (``did_you_mean``) and names classes (``type_names``): for
dsh.yml's errors and every other error of the core that names a value or a name."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["SHOWN_CHARS", "did_you_mean", "repr_cut", "shown", "type_names"]


#: The characters of a value an error quotes; a longer one is cut (a 2 MB name).
SHOWN_CHARS = 60


def shown(value: str, secrets: Iterable[str] = ()) -> str:
    """``value`` quoted (``repr``) for an error, cut to ``SHOWN_CHARS`` characters with
    its length said when it is longer. Each key dsh knows (``known_keys``) and each of
    ``secrets`` (a config's own keys, say) is ``***`` first: cut first, a value could
    keep a piece of a key shorter than half of it, which ``redact`` no longer
    recognises (nor so the ``dsh`` command, which hides the keys in what it prints)."""
    from dsh._secrets import known_keys, redact

    hidden = redact(value, (*known_keys(), *secrets))
    if len(hidden) <= SHOWN_CHARS:
        return repr(hidden)
    return f"{hidden[:SHOWN_CHARS]!r}... ({len(value):,} characters)"


def repr_cut(value: object, most: int = SHOWN_CHARS) -> str:
    """``repr(value)`` cut to ``most`` characters, ``...`` ending it: an error naming an
    object (a plugin, a value of the wrong type) stays on a line."""
    said = repr(value)
    return said if len(said) <= most else said[: most - 3] + "..."


def did_you_mean(name: str, choices: Sequence[str] | Mapping[str, Any], cutoff: float = 0.6) -> str:
    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=cutoff)
    return f"; did you mean {close[0]!r}?" if close else ""


def type_names(*types: type) -> list[str]:
    """The types' qualified names, each with its module when two would read the same
    (one class name in two modules: the message must tell them apart)."""
    names = [t.__qualname__ for t in types]
    if len(set(names)) == len(names):
        return names
    return [f"{t.__module__}.{t.__qualname__}" for t in types]
