"""The agent options the core reads, and what each must be.

One statement of the rules, used twice: when ``dsh.yml`` is loaded (``agents[].options``,
so the file's line is named) and when an agent is built (options from code). A step
then checks only the exact types of the values it reads (options may change between
steps), and ``bad_option`` names what is wrong when that check fails.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from dsh.errors import DshError

__all__ = [
    "CORE_OPTIONS",
    "QUEUE_MODES",
    "bad_option",
    "check_core_options",
    "core_option_problem",
    "option_typo",
    "queue_mode",
    "request_options",
    "retry_allowance",
    "step_limit",
    "storable_options",
]

#: The ``queue_mode`` values, read when the loop takes prompts (``dsh.loop``).
QUEUE_MODES: Final = ("batch", "one-at-a-time")
_TYPO = 0.85  # difflib's ratio above which an unknown option is taken for a typo


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
    "queue_mode": (lambda v: v in QUEUE_MODES, "'batch' or 'one-at-a-time'"),
    # read by the built-in file tools (dsh.builtin_tools._paths)
    "extra_roots": (_paths, "a list of paths"),
}


def core_option_problem(options: Mapping[str, Any], *, yaml: bool = False) -> str | None:
    """What is wrong with the first bad core option of ``options``, or None; a value
    is named by its kind (in YAML's words for a file's, ``yaml``), never quoted: a
    string might be a key pasted in the wrong place, and a step's error is stored with
    the session. A number, a boolean and null are said as they are."""
    for key, (valid, expected) in CORE_OPTIONS.items():
        if key in options and not valid(options[key]):
            value = options[key]
            if key == "queue_mode" and isinstance(value, str):  # a misspelt choice?
                close = difflib.get_close_matches(value, QUEUE_MODES, n=1, cutoff=0.6)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                return f"option {key!r} must be {expected}{hint}"
            return f"option {key!r} must be {expected}, not {_said(value, yaml=yaml)}"
    return None


def _said(value: Any, *, yaml: bool) -> str:
    """A bad option's value as an error names it: a list of paths by its first item
    that is not one; in YAML's words (``yaml``) or Python's."""
    if yaml:
        from dsh._config_errors import yaml_kind as kind
    else:
        kind = _python_kind
    if isinstance(value, int | float) and not isinstance(value, bool):
        return repr(value)
    if value is None or isinstance(value, bool):
        return kind(value) if yaml else repr(value)
    if isinstance(value, list | tuple):
        wrong = [item for item in value if not isinstance(item, str | os.PathLike)]
        if wrong:
            return f"{kind(value)} holding {kind(wrong[0])}"
    return kind(value)


def _python_kind(value: object) -> str:
    if value is None:  # not "a NoneType"
        return "None"
    name = type(value).__name__
    return f"{'an' if name[:1] in 'aeiou' else 'a'} {name}"


def bad_option(agent_id: str, options: Mapping[str, Any]) -> DshError:
    """The error for agent ``agent_id`` whose ``options`` a step's quick check of what it
    reads found wrong (changed since the agent was created, when they were checked):
    the first bad core option, named as ``agents.create`` names it."""
    problem = core_option_problem(options) or "a core option is not what it must be"
    return DshError(f"agent {agent_id!r}: {problem}")


def check_core_options(agent_id: str, options: Mapping[str, Any]) -> None:
    """A ``DshError`` naming agent ``agent_id`` when ``options`` hold a bad core option
    (when an agent is built)."""
    problem = core_option_problem(options)
    if problem is not None:
        raise DshError(f"agent {agent_id!r}: {problem}")


def queue_mode(agent_id: str, options: Mapping[str, Any]) -> tuple[bool, DshError | None]:
    """Whether the loop takes every queued prompt into a turn (``queue_mode: batch``,
    the default) or one (``one-at-a-time``), read each time it takes prompts; with the
    error a bad value ends that turn with (None when good: prompts are taken anyway, so
    the turn that ends ``error`` is the one that took them)."""
    mode = options.get("queue_mode", "batch")
    refused = None if mode in QUEUE_MODES else bad_option(agent_id, options)
    return mode != "one-at-a-time", refused


# What a step reads, checked again each time it reads it: the options may have changed
# since they were checked (at creation). Only the exact types are checked, cheaply; what
# is wrong is worked out (``bad_option``) only when a check fails.


def step_limit(agent_id: str, options: Mapping[str, Any]) -> int:
    """``max_steps`` (default 50), read when a turn starts."""
    max_steps = options.get("max_steps", 50)
    if max_steps.__class__ is not int or max_steps < 1:
        raise bad_option(agent_id, options)
    return max_steps


def request_options(
    agent_id: str, options: Mapping[str, Any]
) -> tuple[str | None, str, int | None]:
    """``model``, ``system_prompt`` and ``max_tokens``, read for each model request."""
    name = options.get("model")
    system = options.get("system_prompt", "")
    limit = options.get("max_tokens")
    if (
        system.__class__ is not str
        or (name is not None and name.__class__ is not str)
        or (limit is not None and (limit.__class__ is not int or limit < 1))
    ):
        raise bad_option(agent_id, options)
    return name, system, limit


def retry_allowance(agent_id: str, options: Mapping[str, Any]) -> int:
    """``max_request_retries`` (default 1), read when a model request fails."""
    allowed = options.get("max_request_retries", 1)
    if allowed.__class__ is not int or allowed < 0:
        raise bad_option(agent_id, options)
    return allowed


def option_typo(key: str, known: Sequence[str]) -> str:
    """``"; did you mean 'max_steps'?"`` when ``key`` is close enough to a known option
    to be its typo (``max_token``, ``permision``, ``audti``), not merely alike
    (``max_turns``, ``prompt``: those stay free for plugins); else ``""``."""
    close = difflib.get_close_matches(key, list(known), n=1, cutoff=_TYPO)
    if close:
        return f"; did you mean {close[0]!r}?"
    for name in known:  # two neighbouring letters swapped: a ratio rates it too low
        if len(name) != len(key):
            continue
        diff = [i for i, (a, b) in enumerate(zip(key, name, strict=True)) if a != b]
        if len(diff) == 2 and diff[1] == diff[0] + 1:
            i, j = diff
            if (key[i], key[j]) == (name[j], name[i]):
                return f"; did you mean {name!r}?"
    return ""


def storable_options(agent_id: str, options: dict[str, Any]) -> dict[str, Any]:
    """The options that can be stored with the session (JSON values); the others are
    left out with a warning naming them, so a resume still gets the rest."""
    from dsh._json import check_json, copied
    from dsh._secrets import get_logger
    from dsh.errors import EventDataError

    kept: dict[str, Any] = {}
    for key, value in options.items():
        try:
            check_json({key: value}, "session/meta")
        except EventDataError as exc:
            get_logger("dsh.agent").warning(
                "agent %r: option %r is not stored with the session (%s); a resume "
                "without options will not have it",
                agent_id,
                key,
                exc.reason,
            )
        else:
            kept[key] = copied(value)  # a caller changing its list later: not stored
    return kept
