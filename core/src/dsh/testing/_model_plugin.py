"""The plugin through which ``scripted_harness`` registers the models it is given,
named ``scripted-models``: the origin ``harness.models.origin(name)`` says, and the
provider to declare such a model under in a ``config_text``."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Final

from dsh.errors import DshError
from dsh.hookspecs import hookimpl

if TYPE_CHECKING:
    from dsh.harness import Harness

__all__ = ["NAME", "ModelPlugin"]

NAME: Final = "scripted-models"


class ModelPlugin:
    """Registers last (``trylast``), so that a name another plugin registers too (an
    installed one's scripted model, say) is refused here, where the message can say
    where each came from: dsh's own "registered twice: by 'scripted-models' and ..."
    named a plugin the test's author never wrote."""

    def __init__(self, models: Iterable[Any]) -> None:
        self.models = list(models)
        #: set by scripted_harness once the harness is made
        self.harness: Harness | None = None

    @hookimpl(trylast=True)
    def register_models(self, register: Callable[..., None]) -> None:
        for model in self.models:
            try:
                register(model)
            except DshError as refused:
                # the core's own refusal, reworded: raised as it is, it stays the
                # registry's (a new error would be reported as this plugin's failure)
                said = self._twice(model.info.name)
                if said is not None:
                    refused.args = (said,)
                raise

    def _twice(self, name: str) -> str | None:
        """Why ``name`` is taken, or None when it is not (another refusal)."""
        harness = self.harness
        if harness is None or name not in harness.models:
            return None
        fix = "name one otherwise: ScriptedModel([...], name='other')"
        other = harness.models.origin(name)
        if other == NAME:
            return f"model {name!r} is passed to scripted_harness twice: {fix}"
        ours = "dsh.testing's scripted_harness (the ScriptedModel passed to it)"
        source = harness.pm.distributions.get(other)
        if source is None:
            return f"model {name!r} is registered by plugin {other!r} and by {ours}: {fix}"
        return (
            f"model {name!r} is registered by plugin {other!r} (installed: the entry point "
            f"of {source[0]}) and by {ours}: {fix}, or pass load_entry_points=False to "
            "leave out the installed plugins"
        )
