"""One walk over a nested value (an option's, a session's meta, a plugin's settings):
each entry of its mappings, lists, tuples and sets, at any depth, with its path, which
the checks of options name (``agents[0].options.gw.hosts[0].token``), the hiding of
secrets by their names, and the finding of the secrets a plugin's settings declare
(``SecretStr``) all use.

It keeps its own queue, not the call stack (a value nested deep in code cannot
overflow it), and walks each container once (a list given in code may hold itself)."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Mapping

from pydantic import BaseModel

__all__ = ["Path", "every_value", "walk"]

#: Where an entry is from the value walked: keys and indexes (``("hosts", 1, "token")``).
Path = tuple[str | int, ...]


def walk(value: object, *, models: bool = False) -> Iterator[tuple[Path, object, object]]:
    """Each entry in ``value`` as (its path, its key, its value), shallowest first (in
    a container's order): a mapping's keys, a list's or a tuple's indexes, a set's
    items numbered as they come. A key neither str nor int is in the path as its repr.
    ``models``: a pydantic model is walked too, as a mapping of its fields (and extra
    keys)."""
    todo: deque[tuple[Path, object]] = deque([((), value)])
    seen: set[int] = set()
    while todo:
        place, item = todo.popleft()
        pairs = _pairs(item, models)
        if pairs is None or id(item) in seen:
            continue
        seen.add(id(item))
        for key, inner in pairs:
            path = (*place, key if isinstance(key, str | int) else repr(key))
            yield path, key, inner
            todo.append((path, inner))


def every_value(value: object, *, models: bool = False) -> Iterator[object]:
    """``value`` and every value nested in it (``walk``'s), keys left out."""
    yield value
    for _, _, inner in walk(value, models=models):
        yield inner


def _pairs(item: object, models: bool) -> Iterable[tuple[object, object]] | None:
    """``item``'s entries as (key, value); None when it holds none to walk."""
    if isinstance(item, Mapping):
        return item.items()
    if isinstance(item, list | tuple | set | frozenset):
        return enumerate(item)
    if models and isinstance(item, BaseModel):
        return {**vars(item), **(item.__pydantic_extra__ or {})}.items()
    return None
