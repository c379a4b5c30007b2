"""What ``Harness(...)`` refuses, and that it is entered once (found by a review of
embedding dsh from Python: a nested ``async with h:`` stopped the harness on its inner
exit and left an agent running and unflushed; ``config=`` with ``config_text=`` used the
text and named the file; a dict as ``config`` failed late with Python's own TypeError; a
missing workspace was taken)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from loop_support import LIMIT

from dsh import DshError
from dsh.config import load_config
from dsh.harness import Harness
from dsh.testing import ScriptedModel, hang, scripted_harness


async def test_a_harness_entered_inside_itself_is_refused_and_keeps_running() -> None:
    with anyio.fail_after(LIMIT):
        async with scripted_harness(ScriptedModel([hang("p")]), load_entry_points=False) as h:
            agent = await h.agents.create("a", options={"model": "scripted"})
            agent.send("go")
            with pytest.raises(DshError, match=r"^this Harness is already started: a Harn"):
                async with h:
                    pass  # pragma: no cover
            assert agent.status != "disposed"
            assert h.agents.list() == [agent]  # still running, and can still create
            await h.agents.create("b", options={"model": "scripted"})
    assert agent.status == "disposed"


async def test_a_harness_that_has_stopped_is_not_entered_again() -> None:
    # entered again, its models: were registered twice ("by 'config' and 'config'")
    text = "models:\n  m: {provider: openai-compatible, base_url: 'http://h/v1'}\n"
    harness = Harness(load_entry_points=False, config_text=text)
    async with harness:
        pass
    with pytest.raises(DshError) as caught:
        async with harness:
            pass  # pragma: no cover
    assert str(caught.value) == (
        "this Harness has stopped: a Harness is entered once; make a new one"
    )


async def test_a_harness_whose_start_failed_is_not_entered_again() -> None:
    harness = Harness(load_entry_points=False, config_text="nope: 1")
    with pytest.raises(DshError, match="nope"):
        async with harness:
            pass  # pragma: no cover
    with pytest.raises(DshError, match=r"^this Harness has stopped"):
        async with harness:
            pass  # pragma: no cover


@pytest.mark.parametrize("config", ["dsh.yml", load_config()], ids=["path", "Config"])
def test_config_and_config_text_together_are_refused(config: object) -> None:
    with pytest.raises(TypeError) as caught:
        Harness(config=config, config_text="model: m", load_entry_points=False)  # type: ignore[arg-type]
    assert str(caught.value) == (
        "Harness() takes config= or config_text=, not both: config= is a loaded Config "
        "or the path of a YAML file, config_text= the YAML itself"
    )


@pytest.mark.parametrize(
    ("config", "kind"), [({"model": "fast"}, "a dict"), (3, "an int")], ids=["dict", "int"]
)
def test_a_config_that_is_neither_a_config_nor_a_path_is_refused(config: object, kind: str) -> None:
    with pytest.raises(TypeError) as caught:
        Harness(config=config, load_entry_points=False)  # type: ignore[arg-type]
    assert str(caught.value) == (
        f"Harness(config=...) takes a loaded Config or the path of a YAML file, not {kind}; "
        "give YAML text as config_text= (yaml.safe_dump(settings) for a dict)"
    )


@pytest.mark.parametrize("what", ["missing", "a-file"])
def test_a_workspace_that_is_not_a_directory_is_refused(tmp_path: Path, what: str) -> None:
    (tmp_path / "a-file").write_text("")
    with pytest.raises(DshError) as caught:
        Harness(load_entry_points=False, workspace=tmp_path / what)
    assert str(caught.value) == f"workspace {str(tmp_path / what)!r} is not a directory"


@pytest.mark.parametrize(
    "text",
    [
        "models:\n  m: {provider: openai-compatible, headers: {X-Token: tk-0123456789abcdef}}\n",
        "model: tk-0123456789abcdef",
        "{model: tk-0123456789abcdef}",
    ],
)
async def test_yaml_text_given_as_config_points_to_config_text(
    text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It was "file not found", quoting the text (a token in it too) as the path."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DshError) as caught:
        async with Harness(load_entry_points=False, config=text):
            pass  # pragma: no cover
    said = str(caught.value)
    assert "given YAML text" in said and "Harness(config_text=...)" in said
    assert "tk-0123456789abcdef" not in said


async def test_a_path_not_there_is_still_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(DshError, match=r"nope\.yml: file not found$"):
        async with Harness(load_entry_points=False, config=tmp_path / "nope.yml"):
            pass  # pragma: no cover
