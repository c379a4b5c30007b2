"""Plugin settings models (``register_settings``): which plugin registered the model for
a section, and what to say when a model fails in a way pydantic does not report."""

from __future__ import annotations

import traceback
from weakref import WeakKeyDictionary

from pydantic import BaseModel

__all__ = ["not_a_model", "not_installed", "owner", "raised", "record_owner"]

#: model class -> {section: the plugin that registered it for that section}. Weak, so a
#: model class defined in a test goes away with it; registrations are synchronous, so
#: the last one for a section is the one its settings mapping holds.
_owners: WeakKeyDictionary[type[BaseModel], dict[str, str]] = WeakKeyDictionary()


def record_owner(model: type[BaseModel], section: str, plugin: str) -> None:
    _owners.setdefault(model, {})[section] = plugin


def owner(model: type[BaseModel], section: str) -> str:
    """The plugin that registered ``model`` for ``section`` (a mapping built without
    ``add_settings``: the section's name, which is the plugin's by default)."""
    return _owners.get(model, {}).get(section, section)


def raised(model: type[BaseModel], section: str, exc: Exception) -> str:
    """The reason for a problem where ``model`` raised ``exc``, not a ValidationError
    (a validator raising KeyError): its type and where, never its message (it may quote
    the value, a secret the model does not mark)."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" at {frames[-1].filename}:{frames[-1].lineno}" if frames else ""
    return (
        f"plugin {owner(model, section)!r}: its settings model {model.__name__} raised "
        f"{type(exc).__name__}{where} (its message is not shown: it may quote the value); "
        "a validator should raise ValueError, which dsh reports at the key"
    )


def not_a_model(plugin: str, model: object) -> str:
    """Why ``register(model)`` in ``plugin``'s ``register_settings`` is refused, with the
    fix that fits: a class that is not a pydantic model (a dataclass, say) must become
    one; anything else (an instance) is to be replaced by the model class itself."""
    if isinstance(model, type):
        return (
            f"plugin {plugin!r} registered settings {model.__qualname__}, a class that is "
            "not a pydantic model; it must be a subclass of pydantic.BaseModel"
        )
    what = f"an instance of {type(model).__name__}" if isinstance(model, BaseModel) else repr(model)
    return (
        f"plugin {plugin!r} registered settings {what}, which is not a pydantic model "
        "class; register the class itself (register(MySettings))"
    )


def not_installed(what: str, name: str) -> str:
    """Why a ``what`` ("section", "option") for dsh's own plugin ``name`` is refused
    when that plugin is not installed (as ``dsh sessions`` says it)."""
    return (
        f"{what} {name!r} is for dsh-{name}, which is not installed: install dsh-{name}, "
        f"or remove the {what}"
    )
