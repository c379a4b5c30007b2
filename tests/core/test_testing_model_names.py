"""``scripted_harness`` given a model whose name another plugin registers too: docs/
testing.md's command-line recipe (an installed plugin registering a ScriptedModel,
named ``scripted`` by default) made every default ``scripted_harness`` test fail with
"model 'scripted' is registered twice: by 'scripted-models' and 'scripted'", naming a
plugin the author never wrote. The refusal now says where each model came from."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from dsh import DshError, hookimpl
from dsh.testing import ScriptedModel, run_turn, scripted_harness

RECIPE = """
from dsh import hookimpl


@hookimpl
def register_models(register):
    from dsh.testing import ScriptedModel

    register(ScriptedModel(["Listed."]))
"""
THEIRS = "dsh.testing's scripted_harness (the ScriptedModel passed to it)"
FIX = "name one otherwise: ScriptedModel([...], name='other')"


async def refused(*models: ScriptedModel, **options: object) -> str:
    with pytest.raises(DshError) as caught:
        async with scripted_harness(*models, **options):  # type: ignore[arg-type]
            pass
    return str(caught.value)


async def test_an_installed_plugin_s_scripted_model_is_named_with_its_distribution(
    install: Callable[..., None], monkeypatch: pytest.MonkeyPatch
) -> None:
    install("dsh-try", "try", "dsh_try_recipe", RECIPE)
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "try")
    monkeypatch.delenv("DSH_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    assert await refused(ScriptedModel([])) == (
        "model 'scripted' is registered by plugin 'try' (installed: the entry point of "
        f"dsh-try) and by {THEIRS}: {FIX}, or pass load_entry_points=False to leave out "
        "the installed plugins"
    )
    mine = ScriptedModel(["ok"], name="mine")  # as the message says: both load
    async with scripted_harness(mine) as harness:
        assert harness.models.origin("scripted") == "try"
        await run_turn(await harness.agents.create("a", options={"model": "mine"}), "hi")
    assert len(mine.requests) == 1


class _Registers:
    @hookimpl
    def register_models(self, register: Callable[..., None]) -> None:
        register(ScriptedModel([]))


async def test_a_plugin_passed_in_is_named_as_it_was_passed() -> None:
    said = await refused(
        ScriptedModel([]), plugins=[("mine", _Registers())], load_entry_points=False
    )
    assert said == f"model 'scripted' is registered by plugin 'mine' and by {THEIRS}: {FIX}"


async def test_two_models_of_one_name_passed_are_told_apart() -> None:
    said = await refused(ScriptedModel([]), ScriptedModel([]), load_entry_points=False)
    assert said == f"model 'scripted' is passed to scripted_harness twice: {FIX}"


def _recipe() -> tuple[str, str]:
    """docs/testing.md's command-line recipe: its code, and the text around it."""
    doc = (Path(__file__).parents[2] / "docs" / "testing.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", doc, re.S)
    (code,) = [b for b in blocks if "def register_models" in b and "dsh --help" in b]
    return code, doc


async def test_the_docs_recipe_leaves_the_default_scripted_harness_working(
    install: Callable[..., None], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, doc = _recipe()
    install("dsh-try", "try", "dsh_try_docs_recipe", code)
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "try")
    monkeypatch.delenv("DSH_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    model = ScriptedModel(["ok"])
    async with scripted_harness(model) as harness:  # as testing.md's first example
        (name,) = [n for n in harness.models.names() if harness.models.origin(n) == "try"]
        await run_turn(await harness.agents.create("a", options={"model": "scripted"}), "hi")
    assert len(model.requests) == 1
    assert f"`dsh -m {name} run ...`" in doc
    assert f"`models: {{{name}: {{provider: scripted}}}}`" in doc
