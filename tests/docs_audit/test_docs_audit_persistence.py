"""docs/persistence.md, checked as a user reads it (dsh-persistence loaded the way
`dsh` loads it: the entry point's module, `dsh_persistence`)."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest
from cli_support import dsh, text_reply

from dsh.config import load_config
from dsh.errors import ConfigError
from dsh.testing import ScriptedModel, run_turn, scripted_harness

pytest.importorskip("dsh_persistence")

import dsh_persistence
from dsh_persistence import PersistenceSettings, SessionFormatError


def header(directory: Path) -> dict[str, Any]:
    (stored,) = directory.glob("*.jsonl")
    return json.loads(stored.read_bytes().partition(b"\n")[0])


def names(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.iterdir())


def make_newer(directory: Path) -> Path:
    """Mark the one stored session as written in format version 2."""
    (stored,) = directory.glob("*.jsonl")
    head, _, rest = stored.read_bytes().partition(b"\n")
    stored.write_bytes(json.dumps({**json.loads(head), "version": 2}).encode() + b"\n" + rest)
    return stored


async def one_turn(
    workspace: Path, prompt: str = "hi", session_id: str | None = None, **options: Any
) -> str:
    """One turn of agent 'main' with the entry point's module as the plugin."""
    model = ScriptedModel(["ok"])
    async with scripted_harness(
        model,
        plugins=[("persistence", dsh_persistence)],
        load_entry_points=False,
        workspace=workspace,
    ) as harness:
        agent = await harness.agents.create(
            "main", options={"model": "scripted", **options}, session_id=session_id
        )
        await run_turn(agent, prompt)
        return agent.session.id


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "sessions"
    monkeypatch.setenv("DSH_PERSISTENCE_DIR", str(directory))
    return directory


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace that is not the directory the process runs in."""
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    workspace = tmp_path / "project"
    workspace.mkdir()
    return workspace


async def test_header_cwd_is_the_agents_workspace(store: Path, elsewhere: Path) -> None:
    """persistence.md:134: "`cwd` | the workspace of the agent that first stored the
    session (`--cwd`, `Harness(workspace=...)`; the process's working directory for a
    session no agent wrote)"."""
    await one_turn(elsewhere)
    assert header(store)["cwd"] == str(elsewhere)  # tmp_path is already resolved


def test_dsh_cwd_run_records_the_workspace_as_cwd(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """persistence.md:134: "`cwd` | the workspace of the agent that first stored the
    session (`--cwd`, ...)"."""
    server = model_server([text_reply("ok")])
    (tmp_path / "ws").mkdir()
    model = f"openai-compatible:tiny@{server.url}"
    done = dsh("--cwd", "ws", "-m", model, "run", "hi", env=cli_env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert header(Path(cli_env["DSH_PERSISTENCE_DIR"]))["cwd"] == str(tmp_path / "ws")


async def test_an_id_is_escaped_in_the_file_name(store: Path, tmp_path: Path) -> None:
    """persistence.md:114-116: "The id is written with every byte outside
    `[A-Za-z0-9_-]` as `%XX` ... (`a.b/c` is stored as `a%2Eb%2Fc.jsonl`)"."""
    await one_turn(tmp_path, session_id="a.b/c")
    await one_turn(tmp_path, session_id=".é")
    assert names(store) == ["%2E%C3%A9.jsonl", "a%2Eb%2Fc.jsonl"]


async def test_the_title_is_the_first_prompt_on_one_line_at_most_120(
    store: Path, tmp_path: Path
) -> None:
    """persistence.md:135: "`title` | the first prompt, on one line, at most 120
    characters"."""
    await one_turn(tmp_path, prompt="first  line\n" + "x" * 300)
    title = header(store)["title"]
    assert title.startswith("first line x")
    assert "\n" not in title and len(title) == 120


async def test_options_are_stored_in_meta_and_non_json_ones_left_out_with_a_warning(
    store: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """persistence.md:218-221: "The options the agent was created with are stored in the
    session's meta (those whose values are JSON; any other is left out with a warning
    naming it) ... The session's meta also names the agent that created it (`agent`)"."""
    with caplog.at_level(logging.WARNING):
        await one_turn(tmp_path, tone=object(), style=["terse", 1])
    meta = header(store)["meta"]
    assert meta["agent"] == "main"
    assert meta["options"] == {"model": "scripted", "style": ["terse", 1]}
    assert any("'tone'" in r.getMessage() for r in caplog.records if r.levelname == "WARNING")


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ("0", None),
        ("3600", None),
        ("3600.5", "less than or equal to 3600"),
        ("-0.01", "greater than or equal to 0"),
        (".inf", "Input should be a finite number, not .inf"),
        ("-.inf", "Input should be a finite number, not -.inf"),
        (".nan", "Input should be a number, not .nan (NaN)"),
    ],
)
def test_checkpoint_delay_is_a_finite_number_from_0_to_3600(value: str, error: str | None) -> None:
    """persistence.md:74: "`checkpoint_delay` | `0.05` | ... a finite number from 0 to
    3600"."""
    text = f"persistence:\n  checkpoint_delay: {value}\n"
    settings = {"persistence": PersistenceSettings}
    if error is None:
        assert load_config(text=text, settings=settings).section("persistence") is not None
        return
    with pytest.raises(ConfigError) as caught:
        load_config(text=text, settings=settings)
    assert caught.value.path == "persistence.checkpoint_delay"
    assert error in caught.value.reason


def test_defaults_of_the_settings_table() -> None:
    """persistence.md:67-74: backend `jsonl`, fsync `flush`, checkpoints `true`,
    checkpoint_delay `0.05`, database `<directory>/sessions.sqlite3`."""
    settings = PersistenceSettings(directory=Path("/d"))
    assert (settings.backend, settings.fsync, settings.checkpoints) == ("jsonl", "flush", True)
    assert settings.checkpoint_delay == 0.05
    assert settings.database_path() == Path("/d/sessions.sqlite3")


def test_an_unusable_directory_stops_dsh_run_with_status_2_before_the_model(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """persistence.md:93-100: "An unusable location ... stops the harness from starting
    ...: `dsh run` and `dsh chat` exit with status 2 before the model is called ... The
    message names the path and the setting it comes from: `/proc/nope
    (persistence.directory) is not a usable session directory: cannot create it: No such
    file or directory`"."""
    if not Path("/proc/self").exists():
        pytest.skip("needs Linux /proc")
    server = model_server([text_reply("should not be asked")])
    (tmp_path / "dsh.yml").write_text("persistence:\n  directory: /proc/nope\n")
    model = f"openai-compatible:tiny@{server.url}"
    done = dsh("-m", model, "run", "hi", env=cli_env, cwd=tmp_path)
    assert done.returncode == 2
    assert (
        "/proc/nope (persistence.directory) is not a usable session directory: "
        "cannot create it: No such file or directory (plugin 'persistence')"
    ) in done.stderr
    assert server.bodies() == []


async def test_a_newer_format_is_refused_with_the_documented_message(
    store: Path, tmp_path: Path
) -> None:
    '''persistence.md:198-200: "A newer format is refused with `SessionFormatError`:
    "session format version 2 is newer than this dsh-persistence reads (up to 1);
    upgrade dsh-persistence to open it. The file was not changed.""'''
    session_id = await one_turn(tmp_path)
    stored = make_newer(store)
    before = stored.read_bytes()
    async with scripted_harness(
        plugins=[("persistence", dsh_persistence)], load_entry_points=False, workspace=tmp_path
    ) as harness:
        with pytest.raises(SessionFormatError) as caught:
            await harness.agents.load_stored(session_id)
    assert (
        "session format version 2 is newer than this dsh-persistence reads (up to 1); "
        "upgrade dsh-persistence to open it. The file was not changed."
    ) in str(caught.value)
    assert caught.value.code == "SESSION_FORMAT"
    assert stored.read_bytes() == before


def test_config_check_changes_the_session_directorys_time_and_nothing_in_it(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    """persistence.md: "The JSONL backend's check of its directory as a harness that
    starts agents starts (... `dsh config check`) makes and removes a file in it, leaving
    nothing, but changing the directory's modification time"."""
    directory = tmp_path / "sessions"
    directory.mkdir()
    os.utime(directory, ns=(10**18, 10**18))
    env = {**cli_env, "DSH_LOAD_PLUGINS": "persistence", "DSH_PERSISTENCE_DIR": str(directory)}
    done = dsh("config", "check", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert names(directory) == []
    assert directory.stat().st_mtime_ns != 10**18


def resuming_block() -> str:
    """The first ```python block under persistence.md's "## Resuming"."""
    text = (Path(__file__).parents[2] / "docs" / "persistence.md").read_text()
    section = text.split("\n## Resuming\n", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


@pytest.mark.parametrize("listed", [True, False], ids=["agents-listed", "no-agents"])
async def test_the_resuming_sample_runs_under_the_config_the_page_describes(
    listed: bool, store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """persistence.md, Resuming: the sample failed as written (no import, and with the
    agent 'main' listed in dsh.yml, `agent 'main' already exists; dispose it first`)."""
    import dsh.harness
    from dsh import hookimpl
    from dsh.harness import Harness

    model = ScriptedModel(["first answer", "second answer"])

    class Models:
        @hookimpl
        def register_models(self, register: Any) -> None:
            register(model)

    real = dsh.harness.create_plugin_manager

    def with_model(plugins: Any = (), **kwargs: Any) -> Any:
        return real([("models", Models()), *plugins], **kwargs)

    monkeypatch.setattr(dsh.harness, "create_plugin_manager", with_model)
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "persistence")
    monkeypatch.chdir(tmp_path)
    agents = (
        "models: {scripted: {provider: scripted}}\nagents:\n  - id: main\n    model: scripted\n"
    )
    listing = agents if listed else ""
    (tmp_path / "dsh.yml").write_text(f"{listing}persistence:\n  directory: {store}\n")
    async with Harness(config="dsh.yml") as harness:
        agent = harness.agents.get("main") or await harness.agents.create(
            "main", options={"model": "scripted"}
        )
        await run_turn(agent, "remember 7")
        session_id = agent.session.id

    code = resuming_block()
    assert code.startswith("import anyio\n\nfrom dsh.harness import Harness\n"), code
    run_line = 'anyio.run(main, "main-session-3f…")\n'
    assert code.endswith(run_line)
    scope: dict[str, Any] = {}
    exec(code.removesuffix(run_line), scope)
    await scope["main"](session_id)

    stored = dsh_persistence.JsonlBackend(store).load(session_id)
    assert stored is not None
    prompts = [e.data["content"] for e in stored.stored.events if e.type == "user/message"]
    assert prompts == ["remember 7", "where were we?"]
