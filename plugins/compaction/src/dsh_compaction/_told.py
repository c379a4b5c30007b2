"""What is told once per harness, not once per agent: the failure of a plugin's token
counter. Each agent is given a counter of its own by the plugin, and one broken counter
fails in every agent; warning and reporting each (an ERROR with its traceback) buried a
harness of many agents in copies of one failure."""

from __future__ import annotations

import weakref
from typing import Any

__all__ = ["first_time"]

#: harness -> the plugins whose counter's failure was told
_told: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()


def first_time(harness: Any, plugin: str) -> bool:
    """Whether the failure of ``plugin``'s counter is told now: for the first agent of
    ``harness`` it fails in (without a harness, or with one that takes no weak
    reference, each time)."""
    if harness is None:
        return True
    try:
        told = _told.setdefault(harness, set())
    except TypeError:
        return True
    if plugin in told:
        return False
    told.add(plugin)
    return True
