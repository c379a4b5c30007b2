"""``ModelName``: the type of a plugin setting that names a model of ``dsh.yml``.

A field of a plugin's settings model typed ``ModelName`` (or ``ModelName | None``) is
checked when ``dsh.yml`` is loaded, as an agent's ``model`` is: a name that ``models:``
does not define is an error with its line (``compaction.model: unknown model ...``),
at start-up and in ``dsh config check``, not when the plugin first calls the model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Final, get_args, get_origin

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["ModelName", "model_name_fields"]


class _NamesAModel:
    """The marker in ``ModelName``'s metadata."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NamesAModel"


_MARKER: Final = _NamesAModel()

#: A ``str`` that names a model of ``dsh.yml``'s ``models:`` (checked at load).
ModelName = Annotated[str, _MARKER]


def model_name_fields(model: type[BaseModel]) -> list[str]:
    """The fields of ``model`` typed ``ModelName`` (also inside ``| None``)."""
    return [
        name
        for name, info in model.model_fields.items()
        if _MARKER in info.metadata or _marked(info.annotation)
    ]


def _marked(annotation: Any) -> bool:
    if get_origin(annotation) is Annotated:
        return _MARKER in annotation.__metadata__
    return any(_marked(arg) for arg in get_args(annotation))
