"""A pydantic ``ValidationError`` in dsh's words: one reason per error, the same for
``dsh.yml`` and for agent options given in code (a validator's own words, the accepted
keys for an unknown one, a near miss of a literal, where a required field could come
from), and for the file each error located at its line and column."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import date, datetime
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails
from yaml.nodes import Node

from dsh._config_keys import unknown_field_key, unknown_key
from dsh._config_yaml import AtKey, Loc, Problem, locate
from dsh._quoted import did_you_mean, shown
from dsh._secret_inputs import hide_inputs, secret_inputs

__all__ = ["from_validation", "missing_hint", "reason", "top_missing", "typo_instead", "yaml_kind"]


def reason(
    err: ErrorDetails, loc: Loc, model: type[BaseModel], depth: int, *, hint: str = "", yaml: bool
) -> str:
    """Why ``err`` (at ``loc``, the model's own keys from ``depth`` on) is refused:
    in YAML's words for a file (``yaml``), in Python's for code; ``hint`` is added to a
    required field of the model itself left out. A secret in the input (a
    ``SecretStr`` field's, a value under a secret's name) that a validator's words
    quote is ``***`` there."""
    secrets = secret_inputs(model, tuple(err["loc"]), err.get("input"))
    return hide_inputs(_reason(err, loc, model, depth, hint, yaml, secrets), secrets)


def _reason(
    err: ErrorDetails,
    loc: Loc,
    model: type[BaseModel],
    depth: int,
    hint: str,
    yaml: bool,
    secrets: set[str],
) -> str:
    """``reason``'s words, ``secrets`` hidden before a quoted input is cut (a cut one
    keeps a piece of the secret)."""
    if yaml and err["type"] in _YAML_KINDS:  # not Python's words ("a valid tuple")
        return f"Input should be {_YAML_KINDS[err['type']]}, not {yaml_kind(err['input'])}"
    if err["type"] == "value_error":  # a validator's own words, without "Value error, "
        said = hide_inputs(str(err.get("ctx", {}).get("error", err["msg"])), secrets)
        given = err.get("input")  # quoted whole (a 20,000-character rule): cut
        return said.replace(repr(given), shown(given)) if isinstance(given, str) else said
    if top_missing(err):
        return err["msg"] + hint
    if err["type"] == "extra_forbidden":
        return unknown_key(loc, model, depth)
    if err["type"] == "literal_error" and isinstance(err["input"], str):  # a typo?
        choices = re.findall(r"'([^']*)'", str(err.get("ctx", {}).get("expected", "")))
        return err["msg"] + did_you_mean(err["input"], choices)
    if yaml and err["type"] in _NUMBER_KINDS:  # what it got instead, in YAML's words
        if _reads_as_number(err["input"]):
            return err["msg"] + _NUMBER_AS_STRING
        if not isinstance(err["input"], int | float) or isinstance(err["input"], bool):
            return f"{err['msg']}, not {yaml_kind(err['input'])}"
    given = err.get("input")
    if isinstance(given, float) and _refused_as_no_number(err["type"], given):
        return _no_number(given, yaml=yaml)
    return err["msg"]


#: The errors of a number's limits (``gt``, ``le``, ``allow_inf_nan=False``...), whose
#: words mislead for a NaN (below no bound and above none: "should be greater than 0").
_NUMBER_BOUNDS = frozenset(
    {
        "greater_than",
        "greater_than_equal",
        "less_than",
        "less_than_equal",
        "multiple_of",
        "finite_number",
    }
)


def _refused_as_no_number(kind: str, value: float) -> bool:
    """A NaN refused by any limit, or an infinity refused for being one (an infinity a
    bound refuses keeps the bound's words: ``-.inf`` is not greater than 0)."""
    if math.isnan(value):
        return kind in _NUMBER_BOUNDS
    return math.isinf(value) and kind == "finite_number"


def _no_number(value: float, *, yaml: bool) -> str:
    """Why the NaN or infinity ``value`` is refused: in YAML's spelling (``.nan``,
    ``.inf``) for a file, in Python's for code."""
    if math.isnan(value):
        return f"Input should be a number, not {'.nan (NaN)' if yaml else 'NaN'}"
    sign = "-" if value < 0 else ""
    return f"Input should be a finite number, not {sign}{'.inf' if yaml else 'inf'}"


_NUMBER_KINDS = frozenset({"float_type", "float_parsing", "int_type", "int_parsing"})
_NUMBER_AS_STRING = (
    " (YAML read it as a string: leave it unquoted; YAML 1.1 reads 1e3 and 1.5e3 as "
    "strings too, write 1000 or 1.0e+3)"
)


def _reads_as_number(value: object) -> bool:
    """A string Python reads as a number (``1e3``, ``'60'``), not ``nan`` or ``inf``."""
    if not isinstance(value, str):
        return False
    try:
        return float(value) - float(value) == 0
    except ValueError:
        return False


def missing_hint(plugin: str, source: str | None = None) -> str:
    """Said of a required field of ``plugin``'s settings that nothing gives: the file
    ``source`` has no section for it (``None``: the file being checked; a name in angle
    brackets, ``<defaults>`` or ``<string>``, is no file to name)."""
    if source is None:
        where = "this file"
    elif source.startswith("<"):
        where = "the configuration"
    else:
        where = f"the config ({source})"
    return f" (plugin {plugin!r} has no section in {where} to give it)"


def typo_instead(exc: ValidationError, model: type[BaseModel], value: Any, loc: Loc) -> Loc | None:
    """When only required fields are left out: a key of ``value`` (at ``loc``) the
    model would drop, likely a typo of one of them, reported instead."""
    if all(top_missing(err) for err in exc.errors()):
        return unknown_field_key(model, value, loc)
    return None


def from_validation(
    root: Node | None,
    prefix: Loc,
    exc: ValidationError,
    model: type[BaseModel],
    *,
    missing: bool = True,
    hint: str = "",
) -> list[Problem]:
    """One problem per error, located in the file; ``missing=False`` passes over
    required fields left out at the top level (an agent's plugin options over a plugin
    section that is bad); ``hint`` is added to the reason of each such field when they
    are reported."""
    problems = []
    # The ValidationError becomes the cause (shown by ``dsh -v``) only when it hides
    # the input: a plugin's section may hold a secret its model does not mark.
    cause = exc if model.model_config.get("hide_input_in_errors") else None
    if cause is not None and _quotes_secret(exc, model):  # a validator's words
        cause = None
    for err in exc.errors(include_url=False):  # the input is never shown, only its kind
        if not missing and top_missing(err):
            continue
        loc: Loc = (*prefix, *err["loc"], *_key(err))
        why = reason(err, loc, model, len(prefix), hint=hint, yaml=True)
        problems.append(locate(root, loc, why, cause, missing=err["type"] == "missing"))
    return problems


def _quotes_secret(exc: ValidationError, model: type[BaseModel]) -> bool:
    """Whether ``exc``'s words quote a secret of its input (``secret_inputs``)."""
    said = str(exc)
    for err in exc.errors(include_url=False):
        secrets = secret_inputs(model, tuple(err["loc"]), err.get("input"))
        if hide_inputs(said, secrets) != said:
            return True
    return False


def _key(err: ErrorDetails) -> Loc:
    """The path of the key a validator's reason concerns (AtKey), under ``err``'s place."""
    raised = err.get("ctx", {}).get("error")
    return raised.loc if isinstance(raised, AtKey) else ()


def top_missing(err: ErrorDetails) -> bool:
    """A required field of the model itself left out."""
    return err["type"] == "missing" and len(err["loc"]) == 1


_LIST = "a list ([a, b], or one '- item' per line)"
_MAPPING = "a mapping (key: value lines)"
_YAML_KINDS = {
    "list_type": _LIST,
    "tuple_type": _LIST,
    "set_type": _LIST,
    "frozenset_type": _LIST,
    "dict_type": _MAPPING,
    "model_type": _MAPPING,
    "model_attributes_type": _MAPPING,
    "string_type": "a string",
    "path_type": "a string (a path)",  # not "Input is not a valid path for <class ...>"
}


def yaml_kind(value: object) -> str:
    """What a YAML value is, in YAML's words (never the value: it might be a secret)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"{str(value).lower()} (a boolean)"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, datetime):  # a timestamp (before date: a datetime is one)
        return "a date and time"
    if isinstance(value, date):
        return "a date"
    if isinstance(value, bytes):  # !!binary
        return "binary data"
    if isinstance(value, set | frozenset):  # !!set
        return "a set"
    return f"a {type(value).__name__}"
