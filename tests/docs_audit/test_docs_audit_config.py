"""docs/config.md (and the config parts of docs/cli.md and docs/compaction.md),
checked as a user reads them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cli_support import dsh

from dsh.config import Config, load_config
from dsh.errors import ConfigError

CONFIG_MD = Path(__file__).parents[2] / "docs" / "config.md"
GOOD = "models:\n  fast: {provider: openai}\n"
BAD = "models:\n  fast: {provider: openai, timout: 1}\n"


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    """(the directory dsh runs in, a workspace below it given with --cwd)."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return tmp_path, workspace


def test_a_missing_dsh_config_stops_dsh_and_does_not_fall_back(
    places: tuple[Path, Path], cli_env: dict[str, str]
) -> None:
    """config.md:34-36: "If that file does not exist, dsh stops and names the path. It
    does not fall back to another file"."""
    here, _ = places
    (here / "dsh.yml").write_text(GOOD)
    done = dsh("config", "check", env={**cli_env, "DSH_CONFIG": "nope.yml"}, cwd=here)
    assert done.returncode == 1
    assert f"{here / 'nope.yml'}" in done.stderr
    assert "ok" not in done.stdout


def test_a_relative_dsh_config_is_taken_from_the_cwd_option(
    places: tuple[Path, Path], cli_env: dict[str, str]
) -> None:
    """config.md:34-35: "`$DSH_CONFIG` ... (a relative path is relative to the workspace:
    `--cwd DIR` if given, else the current directory)"."""
    here, workspace = places
    (here / "conf.yml").write_text(GOOD)
    (workspace / "conf.yml").write_text(BAD)
    env = {**cli_env, "DSH_CONFIG": "conf.yml"}
    done = dsh("--cwd", "ws", "config", "check", env=env, cwd=here)
    assert done.returncode == 1
    assert "ws/conf.yml:2:" in done.stderr and "did you mean 'timeout'?" in done.stderr


def test_a_relative_c_file_is_taken_from_the_current_directory(
    places: tuple[Path, Path], cli_env: dict[str, str]
) -> None:
    """config.md:42-43: "`-c FILE` replaces the first two; a relative `FILE` is relative
    to the current directory, like any path on the command line, not to `--cwd`"."""
    here, workspace = places
    (here / "conf.yml").write_text(GOOD)
    (workspace / "conf.yml").write_text(BAD)
    done = dsh("--cwd", "ws", "-c", "conf.yml", "config", "check", env=cli_env, cwd=here)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "conf.yml: ok\n"


def test_no_search_in_parent_directories(
    places: tuple[Path, Path], cli_env: dict[str, str]
) -> None:
    """config.md:37-38: "`dsh.yml` or `dsh.yaml` in the workspace. dsh does not look in
    parent directories"."""
    here, workspace = places
    (here / "dsh.yml").write_text(BAD)
    done = dsh("config", "check", env=cli_env, cwd=workspace)
    assert done.returncode == 0, done.stderr
    assert "timout" not in done.stderr


@pytest.mark.parametrize("text", ["", "# only a comment\n", "models:\nagents:\n"])
def test_an_empty_or_comment_only_file_means_the_defaults(text: str) -> None:
    """config.md:39-40,87-88: "No file: dsh uses the defaults (no models, no agents, no
    plugin sections). An empty file, or one that holds only comments, is the same" and
    "Leaving `models:` or `agents:` empty ... means there are none"."""
    config = load_config(text=text)
    assert (config.models, config.agents, config.default_model) == ({}, [], None)
    assert config.section("permissions") is None


def test_model_defaults() -> None:
    """config.md:95-101: "`model` | the key", "`headers` | `{}`", "`timeout` | `60`",
    "`read_timeout` | none", "`max_retries` | `2`", "`api_key_env` | none"."""
    model = load_config(text=GOOD).models["fast"]
    assert model.model == "fast"
    assert (model.timeout, model.max_retries, model.read_timeout) == (60, 2, None)
    assert (model.headers, model.api_key_env) == ({}, None)


def test_an_api_key_env_that_is_not_a_name_is_refused_without_repeating_it() -> None:
    """config.md:134-136: "It also rejects an `api_key_env` value that is not a variable
    name, which catches a key pasted into the wrong field. Neither error repeats the
    value"."""
    secret = "sk-live-0123456789abcdef"
    with pytest.raises(ConfigError) as caught:
        load_config(text=f"models:\n  fast: {{provider: openai, api_key_env: {secret}}}\n")
    assert caught.value.path == "models.fast.api_key_env"
    assert "environment variable" in caught.value.reason
    assert secret not in str(caught.value) and secret not in repr(caught.value.problems)


@pytest.mark.parametrize(
    ("text", "path", "kind"),
    [
        ("models:\n  fast: {provider: openai, headers: hunter2-secret}\n", "headers", "a string"),
        ("agents: hunter2-secret\n", "agents", "a string"),
        # a number's message names no kind ("Input should be a valid number"); unclear
        # whether the page promises one, but the value must not show either way
        ("models:\n  fast: {provider: openai, timeout: [hunter2-secret]}\n", "timeout", ""),
    ],
)
def test_a_value_of_the_wrong_kind_is_named_in_yaml_words_not_shown(
    text: str, path: str, kind: str
) -> None:
    """config.md:16-17: "A value of the wrong kind is named in YAML's words (a list, a
    mapping, a string), never by the value itself, which might be a secret"."""
    with pytest.raises(ConfigError) as caught:
        load_config(text=text)
    assert caught.value.path.endswith(path)
    assert kind in caught.value.reason
    assert "hunter2" not in str(caught.value)


def test_config_check_prints_every_problem_and_their_count(
    places: tuple[Path, Path], cli_env: dict[str, str]
) -> None:
    """config.md:8-13,21-22: "`dsh config check` prints each on its own line" ending with
    `dsh: 4 problems in dsh.yml`; "prints the problems (status 1)"; and `dsh run` names
    "the first one in the file and how many more there are"."""
    here, _ = places
    (here / "dsh.yml").write_text("agents:\n  - id: a\n    max_steps: 0\n  - id: b\n    model: x\n")
    done = dsh("config", "check", env=cli_env, cwd=here)
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert lines[0].startswith(f"dsh: {here / 'dsh.yml'}:3:5: agents[0].max_steps: ")
    assert lines[1].startswith(f"dsh: {here / 'dsh.yml'}:5:5: agents[1].model: unknown model")
    assert lines[-1] == f"dsh: 2 problems in {here / 'dsh.yml'}"
    ran = dsh("run", "hi", env=cli_env, cwd=here)
    assert ran.returncode == 2
    assert "agents[0].max_steps" in ran.stderr and "(1 more problem in the file)" in ran.stderr


def test_a_bad_agent_entry_does_not_hide_a_duplicate_of_its_id() -> None:
    """config.md:20-24: "If the file has several problems, all are found ... A bad entry
    of `models:` or `agents:` does not hide the rest: the other entries are checked on";
    config.md:112: "`id` | required | Non-empty, unique among the agents"."""
    with pytest.raises(ConfigError) as caught:
        load_config(text="agents:\n  - id: a\n    max_steps: 0\n  - id: a\n")
    assert [p.path for p in caught.value.problems] == ["agents[0].max_steps", "agents[1].id"]


def test_config_check_finds_a_models_problems_once_the_file_loads(
    places: tuple[Path, Path], cli_env: dict[str, str]
) -> None:
    """config.md:30-32: "The models are built only from a file that loads, so their
    problems (an unknown provider, ...) show once the file's other problems are fixed"."""
    here, _ = places
    models = "models:\n  fast: {provider: nope}\n"
    (here / "dsh.yml").write_text(models + "agents:\n  - id: a\n    max_steps: 0\n")
    first = dsh("config", "check", env=cli_env, cwd=here)
    assert first.returncode == 1
    assert "agents[0].max_steps" in first.stderr and "nope" not in first.stderr
    (here / "dsh.yml").write_text(models)
    second = dsh("config", "check", env=cli_env, cwd=here)
    assert second.returncode == 1
    assert "models.fast.provider: unknown provider 'nope'" in second.stderr
    doc = " ".join(CONFIG_MD.read_text().split())
    assert "show once the file's other problems are fixed" in doc


def test_config_check_without_a_file_says_the_defaults_apply(
    places: tuple[Path, Path], cli_env: dict[str, str]
) -> None:
    """config.md:32-33: "With no file, it says `dsh: no dsh.yml here; defaults apply`
    and checks the plugins' start-up alone (status 0 if they start)"."""
    here, _ = places
    done = dsh("config", "check", env=cli_env, cwd=here)
    assert (done.returncode, done.stdout) == (0, "")
    said = done.stderr.strip()
    assert said == "dsh: no dsh.yml here; defaults apply"
    assert f"it says `{said}`" in " ".join(CONFIG_MD.read_text().split())


def config_md_block(lang: str, marker: str) -> str:
    """The ```lang block of config.md that holds ``marker``."""
    blocks = re.findall(rf"```{lang}\n(.*?)```", CONFIG_MD.read_text(), re.DOTALL)
    (block,) = [b for b in blocks if marker in b]
    return block


@pytest.mark.plugins("permissions")
def test_from_python_the_settings_of_every_plugin_load_the_example_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """config.md, From Python: `settings={"myplugin": Settings}` "loads only a file whose
    one plugin section is `myplugin:` (the example above, with its `permissions:`
    section, would be refused)"; the block that collects every plugin's settings
    through `register_settings` loads it."""
    (tmp_path / "dsh.yml").write_text(config_md_block("yaml", "permissions:"))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path / "dsh.yml", settings={})
    assert caught.value.path == "permissions" and "not loaded" in caught.value.reason
    scope: dict[str, object] = {}
    exec(config_md_block("python", "add_settings"), scope)
    config = scope["config"]
    assert isinstance(config, Config) and config.section("permissions") is not None


def test_a_bad_model_entry_is_still_named_among_the_models_defined() -> None:
    """config.md:9-10: with `models.fast.timout` refused, `agents[1].model: unknown model
    'sonet' (models defined: fast, sonnet; local is built in); did you mean 'sonnet'?`:
    the bad entry is still defined (it was left out of the list), and a near miss of its
    name is hinted at."""
    models = "models:\n  fast: {provider: openai, timout: 1}\n  sonnet: {provider: anthropic}\n"
    text = models + "agents:\n  - id: a\n    model: fsat\n  - id: b\n    model: sonet\n"
    with pytest.raises(ConfigError) as caught:
        load_config(text=text)
    reasons = {p.path: p.reason for p in caught.value.problems}
    doc = re.search(r"agents\[1\]\.model: (unknown model 'sonet' .*)", CONFIG_MD.read_text())
    assert doc is not None and reasons["agents[1].model"] == doc[1]
    assert reasons["agents[0].model"].endswith("did you mean 'fast'?")


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ("api_key: sk-live-0123456789abcdef\n", "api_key"),
        (
            "agents:\n  - id: main\n    options: {api_key: sk-live-0123456789abcdef}\n",
            "agents[0].options.api_key",
        ),
    ],
)
def test_an_api_key_anywhere_in_the_file_is_refused_pointing_to_api_key_env(
    text: str, path: str
) -> None:
    """config.md:133-145: "`dsh.yml` never holds a key ... dsh rejects an `api_key:` key
    with a message that points to `api_key_env` ... Neither error repeats the value". At
    the top it was taken for the section of a plugin not installed; in an agent's options
    it was accepted (free for plugins), and `dsh run` stored it with the session."""
    with pytest.raises(ConfigError) as caught:
        load_config(text=text)
    assert caught.value.path == path
    assert "api_key_env" in caught.value.reason and "environment variable" in caught.value.reason
    assert "sk-live" not in str(caught.value)


async def test_an_api_key_in_options_given_in_code_is_refused_as_in_the_file() -> None:
    """config.md, `options`: "Options given in code (`harness.agents.create(...,
    options=...)`) follow the same rules and are checked when the agent is created (a
    `DshError` naming the key ...)": `api_key` is refused there too, never stored with
    the session."""
    from dsh import DshError
    from dsh.testing import ScriptedModel, scripted_harness

    secret = "sk-live-0123456789abcdef"
    async with scripted_harness(ScriptedModel([]), load_entry_points=False) as harness:
        with pytest.raises(DshError) as caught:
            await harness.agents.create("a", options={"model": "scripted", "api_key": secret})
    assert "'api_key'" in str(caught.value) and "api_key_env" in str(caught.value)
    assert secret not in str(caught.value)


def test_where_gives_the_place_the_from_python_block_says_for_the_example_file() -> None:
    """config.md, From Python: `config.where("models", "fast")` on the page's example
    file is the line and column the comment says (it said 3:3, the line of `models:`;
    `fast:` is on line 4)."""
    example = config_md_block("yaml", "permissions:")
    shown = re.search(
        r'config\.where\("models", "fast"\)\s+# "(.*?):(\d+):(\d+)"', CONFIG_MD.read_text()
    )
    assert shown is not None
    config = load_config(text=example.split("\npermissions:")[0] + "\n")
    assert config.where("models", "fast") == f"<string>:{shown[2]}:{shown[3]}"
    assert shown[1].endswith("dsh.yml")
