"""Which keys a settings model reads, so that a key it would drop without a word (a
typo in dsh.yml or in options given in code) is reported where it stands."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from dsh._config_models import API_KEY_HINT, AgentConfig, CoreKeys, ModelConfig
from dsh._config_yaml import Loc
from dsh._options import CORE_OPTIONS
from dsh._quoted import did_you_mean

__all__ = ["ignored_key", "input_key", "layered", "unknown_field_key", "unknown_key"]


def unknown_key(loc: Loc, model: type[BaseModel], depth: int) -> str:
    """Why ``loc`` is refused, with the accepted keys when the enclosing model is known."""
    if loc[-1] == "api_key":
        return API_KEY_HINT
    inner = loc[depth:-1]
    if model is CoreKeys and len(inner) == 2:
        model = ModelConfig if inner[0] == "models" else AgentConfig
    elif inner:
        return "unknown key"
    expected = [input_key(name, info) for name, info in model.model_fields.items()]
    key = str(loc[-1])
    hint = did_you_mean(key, expected)
    if model is ModelConfig and key in _CAPS:  # not max_tokens_field, the body's key
        hint = (
            "; the cap on each answer of this model is max_output_tokens (an agent's own "
            "cap is the max_tokens of its options)"
        )
    elif model is AgentConfig and key in CORE_OPTIONS:
        hint = (
            f"; {key} is an agent option: it goes under the entry's options "
            f"(options: {{{key}: ...}})"
        )
    return f"unknown key (expected one of: {', '.join(expected)}){hint}"


#: What a model's entry may be given for its output cap, in a request body's words.
_CAPS = frozenset(("max_tokens", "max_completion_tokens"))


def ignored_key(value: Any, raw: Any, loc: Loc) -> Loc | None:
    """A key pydantic dropped silently: plugin models that leave ``extra`` unset get
    the core's rule (unknown keys fail); an explicit ``extra="ignore"`` is respected."""
    if isinstance(value, BaseModel) and isinstance(raw, Mapping):
        found = unknown_field_key(type(value), raw, loc)
        if found is not None:
            return found
        for key, name in _input_keys(type(value)).items():
            if key in raw and (found := ignored_key(getattr(value, name), raw[key], (*loc, key))):
                return found
    elif isinstance(value, list | tuple) and isinstance(raw, list):
        for i, (item, raw_item) in enumerate(zip(value, raw, strict=False)):
            if found := ignored_key(item, raw_item, (*loc, i)):
                return found
    elif isinstance(value, dict) and isinstance(raw, Mapping):
        for key, item in value.items():
            if key in raw and (found := ignored_key(item, raw[key], (*loc, key))):
                return found
    return None


def layered(section: Any, value: Any) -> Any:
    """An agent's options for a plugin over the plugin's section of the file, key by
    key, as the plugin layers them (a mapping over a mapping; else ``value`` itself)."""
    if isinstance(section, Mapping) and isinstance(value, Mapping):
        return {**section, **value}
    return value


def unknown_field_key(model: type[BaseModel], raw: Any, loc: Loc) -> Loc | None:
    """A top-level key of ``raw`` that ``model`` would drop silently (no field reads
    it), unless the model says what to do with extra keys itself."""
    if not isinstance(raw, Mapping):
        return None
    fields = model.model_fields
    if model.model_config.get("extra") is not None or any(
        not isinstance(info.validation_alias, str | None) for info in fields.values()
    ):
        return None
    by_key = _input_keys(model)
    for key in raw:
        if key not in by_key:
            return (*loc, key)
    return None


def _input_keys(model: type[BaseModel]) -> dict[str, str]:
    """The key pydantic reads each field from -> the field, and its name too when the
    model allows that."""
    fields = model.model_fields
    by_key = {input_key(name, info): name for name, info in fields.items()}
    config = model.model_config
    if config.get("populate_by_name") or config.get("validate_by_name"):
        by_key.update({name: name for name in fields})
    return by_key


def input_key(name: str, info: FieldInfo) -> str:
    if isinstance(info.validation_alias, str):
        return info.validation_alias
    return info.alias or name
