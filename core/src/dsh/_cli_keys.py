"""The model API keys hidden from what the ``dsh`` command prints of an error (its one
line, its traceback with ``-v``): a plugin command's exception, or a DshError, may quote
one. A command may fail before any key was read, so these are the keys dsh has read, the
built-in providers' variables, the variables ``api_key_env`` names in the config the
command would use (read for this alone, as far as it can be read), the keys written
into its models' ``base_url`` query and ``headers``, and those in the query or fragment
of the ``-m`` given."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dsh._secrets import (
    PROVIDER_KEY_VARIABLES,
    header_secrets,
    key_from_env,
    known_keys,
    longest_first,
    parameter_secrets,
    query_secrets,
    redact,
)
from dsh._shorthand import split_base_url

__all__ = ["hide_keys", "said", "sayer"]


def hide_keys(text: str, args: argparse.Namespace) -> str:
    """``text`` with each key ``***`` (``args``: the command's options, for its config)."""
    return redact(text, _keys(args))


def said(text: str, args: argparse.Namespace) -> str:
    """``text`` as the command says it on stderr: keys hidden, its control characters
    (a model's name in dsh.yml, a file name) shown as ``\\x1b`` (``_visible.visible``)."""
    return sayer(args)(text)


def sayer(args: argparse.Namespace) -> Callable[[str], str]:
    """``said`` for many texts (each problem of a config file): the keys gathered once,
    not the config file read again for each."""
    from dsh._visible import visible

    keys = _keys(args)
    return lambda text: visible(redact(text, keys))


def _keys(args: argparse.Namespace) -> tuple[str, ...]:
    values = set(known_keys())
    models = _models(args)
    variables = set(PROVIDER_KEY_VARIABLES)
    for model in models:
        if isinstance(model.get("api_key_env"), str):
            variables.add(model["api_key_env"])
        if isinstance(model.get("base_url"), str):
            values.update(query_secrets(model["base_url"]))
        if isinstance(model.get("headers"), dict):
            given = {str(k): v for k, v in model["headers"].items() if isinstance(v, str)}
            values.update(header_secrets(given))
    values.update(key_from_env(name) or "" for name in variables)
    rest: str | None = getattr(args, "model", None)
    rest = rest if isinstance(rest, str) else None
    while rest is not None:  # -m ...@URL?api-key=...
        # each part alone, split as dsh.llm.providers splits it: a model part's ?key=...
        # ends at its @, and so does a URL's at a further @http:// in it
        part, rest = split_base_url(rest)
        values.update(parameter_secrets(part))
    return longest_first(values)


def _models(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The entries of ``models:`` in the config file of the command, or none when there
    is no such file or it cannot be read (what went wrong is said elsewhere)."""
    from dsh._config_yaml import parse, read
    from dsh.config import find_config

    try:
        cwd = getattr(args, "cwd", None) or Path.cwd()
        path = getattr(args, "config", None) or find_config(cwd)
        if path is None or not str(path):
            return []
        _, data = parse(read(path, os.fspath(path)), os.fspath(path))
    except Exception:  # an error is being reported already
        return []
    models = data.get("models") if isinstance(data, dict) else None
    if not isinstance(models, dict):
        return []
    return [entry for entry in models.values() if isinstance(entry, dict)]
