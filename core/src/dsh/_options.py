"""The agent options the core reads, and what each must be.

One statement of the rules, used twice: when ``dsh.yml`` is loaded (``agents[].options``,
so the file's line is named) and when an agent is built (options from code). Every step
then trusts them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any, Final

__all__ = ["CORE_OPTIONS", "core_option_problem"]


def _paths(value: Any) -> bool:
    return isinstance(value, list | tuple) and all(
        isinstance(item, str | os.PathLike) for item in value
    )


#: The core's option keys: (check, what the value must be). Other keys are free for
#: plugins.
CORE_OPTIONS: Final[dict[str, tuple[Callable[[Any], bool], str]]] = {
    "model": (lambda v: v is None or type(v) is str, "a model name (str)"),
    "system_prompt": (lambda v: type(v) is str, "a str"),
    "max_steps": (lambda v: type(v) is int and v > 0, "an int > 0"),
    "max_tokens": (lambda v: v is None or (type(v) is int and v > 0), "an int > 0"),
    "max_request_retries": (lambda v: type(v) is int and v >= 0, "an int >= 0"),
    "queue_mode": (lambda v: v in ("batch", "one-at-a-time"), "'batch' or 'one-at-a-time'"),
    # read by the built-in file tools (dsh.builtin_tools._paths)
    "extra_roots": (_paths, "a list of paths"),
}


def core_option_problem(options: Mapping[str, Any]) -> str | None:
    """What is wrong with the first bad core option of ``options``, or None."""
    for key, (valid, expected) in CORE_OPTIONS.items():
        if key in options and not valid(options[key]):
            return f"option {key!r} must be {expected}, not {options[key]!r}"
    return None
