"""The secrets a plugin's settings declare: the values of its fields typed
``pydantic.SecretStr`` or ``SecretBytes``, found anywhere in the validated model (nested
models, lists, dicts). dsh knows them as soon as ``dsh.yml`` is validated, before any
hook runs, so a plugin failing before its ``harness_started`` could add them (reading or
checking its settings) does not show them."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from pydantic import BaseModel, SecretBytes, SecretStr

__all__ = ["declared_secrets"]


def declared_secrets(value: object) -> Iterator[str]:
    """Every ``SecretStr``/``SecretBytes`` value in ``value`` (bytes as UTF-8, with what
    is not UTF-8 replaced)."""
    if isinstance(value, SecretStr):
        yield value.get_secret_value()
    elif isinstance(value, SecretBytes):
        yield value.get_secret_value().decode("utf-8", "replace")
    elif isinstance(value, BaseModel):
        for item in vars(value).values():
            yield from declared_secrets(item)
        for item in (value.__pydantic_extra__ or {}).values():
            yield from declared_secrets(item)
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from declared_secrets(item)
    elif isinstance(value, list | tuple | set | frozenset):
        for item in value:
            yield from declared_secrets(item)
