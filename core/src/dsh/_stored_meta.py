"""A new session's meta (the header a persistence plugin stores: the agent's options,
what the caller gave) cleared of the secrets dsh holds; what the caller gave is
refused first if it is not lossless JSON (``check_meta``), as event data is.

An option's value may be a key dsh read (pasted into ``agents[].options`` by mistake, or
a plugin's setting that holds one): stored as given, it would be in the session file for
anyone who reads it, and in ``dsh sessions show``. So each string in the meta, at any
depth, keys of mappings too, has each secret as ``***`` (``dsh._secrets.redact``); the
agent itself keeps its options as given. A resume rebuilds the options from what was
stored: with ``***``, which the warning says.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dsh._config_secrets import named_hidden
from dsh._json import check_json, copied
from dsh._nested import every_value
from dsh._secrets import get_logger, redact
from dsh.errors import DshError, EventDataError

if TYPE_CHECKING:
    from dsh.harness import Harness

__all__ = ["check_meta", "declared_secrets_of", "held_secrets", "hidden_meta", "hidden_value"]

log = get_logger("dsh.agent")


def check_meta(
    meta: dict[str, Any] | None,
    prefix: str,
    suffix: str = "; a session's meta is stored as JSON",
) -> None:
    """Refuse a ``meta`` that is not lossless JSON (stored with the session, a
    persistence plugin could not write it, or would read back another value), as event
    data is refused: a ``DshError`` ``f"{prefix}at {place}: {reason}{suffix}"``, naming
    the place in it (``meta.tags[1]``). ``agents.create`` refuses its argument so, and
    ``dsh.testing.InMemoryPersistence`` a meta changed after it."""
    if meta:
        try:
            check_json(meta, "session/meta", "meta")
        except EventDataError as exc:
            raise DshError(f"{prefix}at {exc.path}: {exc.reason}{suffix}") from None


def hidden_meta(
    agent_id: str,
    meta: dict[str, Any],
    secrets: tuple[str, ...],
    declared: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """``meta`` with each of ``secrets`` as ``***`` in its strings; a warning names
    the options and the other keys of ``meta`` whose values held one (never the
    secret), unless each was ``declared``: a value of a plugin's ``SecretStr`` field,
    put in options as plugins ask, is hidden as expected (a resume gets it back from
    dsh.yml). A string under a key named as a secret's in the options, at any depth
    (``{gateway: {token: ...}}``, a plugin's setting not typed ``SecretStr``, or one of
    a plugin turned off), is ``***`` too, whatever it holds. ``meta`` itself when
    nothing was hidden."""
    meta = _named_hidden(agent_id, meta, declared)
    if not secrets:
        return meta
    hidden: dict[str, Any] = hidden_value(meta, secrets)
    if hidden == meta:
        return meta
    secrets = tuple(secret for secret in secrets if secret not in declared)
    if hidden_value(meta, secrets) == meta:  # only declared ones: nothing to say
        return hidden
    options = meta.get("options")
    where = [
        f"option {redact(key, secrets)!r}"  # a key's name may hold the secret too
        for key, value in (options.items() if isinstance(options, dict) else ())
        if hidden_value((key, value), secrets) != (key, value)
    ]
    where += [
        f"meta {redact(key, secrets)!r}"
        for key, value in meta.items()
        if key != "options" and hidden_value((key, value), secrets) != (key, value)
    ]
    log.warning(
        "agent %r: %s held a secret dsh holds (a model API key, or a plugin's secret): "
        "stored with the session with *** in its place",
        agent_id,
        ", ".join(where) or "the session's meta",
    )
    return hidden


def _named_hidden(agent_id: str, meta: dict[str, Any], declared: frozenset[str]) -> dict[str, Any]:
    """``meta`` with each value under a key named as a secret's as ``***``
    (``named_hidden``, the walk ``repr(config)`` hides them by, at any depth, in its
    options too: a list or a mapping under one whole); a warning names the options and
    the other keys of ``meta`` that held one that is not ``declared``. ``meta`` itself
    when none did."""
    hidden, found = named_hidden(meta, sections=("options",))
    told: list[str] = []
    for path, inner in found:
        whose = f"option {path[1]!r}" if path[0] == "options" else f"meta {path[0]!r}"
        texts = [text for text in every_value(inner) if isinstance(text, str)]
        if any(text not in declared for text in texts) and whose not in told:
            told.append(whose)
    if told:
        log.warning(
            "agent %r: %s held a value under a secret's name (a key, a token, a "
            "password): stored with the session with *** in its place",
            agent_id,
            ", ".join(told),
        )
    return hidden if found else meta


def declared_secrets_of(harness: Harness | None) -> frozenset[str]:
    """The values plugins' settings declare secret in the harness's config."""
    return harness.config.declared if harness is not None else frozenset()


def held_secrets(harness: Harness | None) -> tuple[str, ...]:
    """The secrets a new session's meta is cleared of: the harness's (as its tool
    results are), or, without one, the keys in the process's environment."""
    if harness is not None:
        return harness.secrets()
    from dsh._secrets import secret_values

    return secret_values(None)


def hidden_value(value: Any, secrets: tuple[str, ...]) -> Any:
    """``value`` with each of ``secrets`` as ``***`` in its strings, at any depth (keys
    of mappings too; a copy sharing no dict or list, walked without recursion); a tuple
    given (a key and its value) item by item, one inside as a list; what is no str,
    dict, list or tuple is kept as it is."""
    if type(value) is tuple:
        return tuple(hidden_value(item, secrets) for item in value)
    return copied(value, lambda text: redact(text, secrets))
