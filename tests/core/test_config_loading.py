"""dsh.yml loading: where the config comes from (a file, a string, none), models and
agents, api keys, and the core agent options checked when the file loads.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from config_support import (
    SETTINGS,
    CompactionSettings,
    PermissionsSettings,
    Summaries,
    fails,
    write,
)
from pydantic import ValidationError

from dsh import ConfigError, DshError
from dsh.config import AgentConfig, ModelConfig, find_config, load_config

FULL = """\
model: fast
models:
  fast:
    provider: openai-compatible
    model: gpt-4.1-mini
    base_url: https://api.example.test/v1
    api_key_env: EXAMPLE_API_KEY
    headers: {X-Team: dsh}
    timeout: 30
    read_timeout: 5.5
    max_retries: 0
    context_window: 128000
    max_output_tokens: 4096
  claude-sonnet:
    provider: anthropic
agents:
  - id: main
    system_prompt: You are terse.
    options: {style: {tone: dry}}
  - id: reviewer
    model: claude-sonnet
    max_steps: 8
    queue_mode: one-at-a-time
permissions:
  mode: deny
  allow: [read_file]
compaction:
  threshold: 0.5
"""


def test_full_config_loads_and_round_trips(tmp_path: Path) -> None:
    path = write(tmp_path, FULL)
    config = load_config(path, settings=SETTINGS)

    assert config.source == str(path)
    assert config.raw == yaml.safe_load(FULL)
    assert config.default_model == "fast"
    fast = config.models["fast"]
    assert (fast.provider, fast.model, fast.base_url) == (
        "openai-compatible",
        "gpt-4.1-mini",
        "https://api.example.test/v1",
    )
    assert fast.headers == {"X-Team": "dsh"}
    assert (fast.timeout, fast.read_timeout, fast.max_retries) == (30.0, 5.5, 0)
    assert (fast.context_window, fast.max_output_tokens) == (128000, 4096)
    # the provider's model name defaults to the config key
    assert config.models["claude-sonnet"].model == "claude-sonnet"
    assert config.models["claude-sonnet"].timeout == 60.0
    assert [a.id for a in config.agents] == ["main", "reviewer"]
    assert config.agents[0].options == {"style": {"tone": "dry"}}
    assert (config.agents[1].max_steps, config.agents[1].queue_mode) == (8, "one-at-a-time")
    assert config.section("permissions") == PermissionsSettings(mode="deny", allow=["read_file"])
    assert config.section("compaction") == CompactionSettings(threshold=0.5)
    with pytest.raises(DshError, match=r"no loaded plugin registers settings under 'shell'"):
        config.section("shell")

    again = load_config(
        write(tmp_path, yaml.safe_dump(config.to_dict()), "again.yml"), settings=SETTINGS
    )
    assert again.models == config.models
    assert again.agents == config.agents
    assert again.sections == config.sections
    assert again.default_model == config.default_model


def test_local_names_the_bundled_model_without_an_entry(tmp_path: Path) -> None:
    # the dsh command starts it (docs/models.md); an entry named local is used instead
    text = "model: local\nagents:\n  - id: a\n    model: local\n"
    config = load_config(write(tmp_path, text), settings={"summaries": Summaries})
    assert config.default_model == "local"
    assert config.agents[0].model == "local"


def test_local_in_a_plugin_setting_loads(tmp_path: Path) -> None:
    # the bundled model runs whenever an agent's model is local (the dsh command starts
    # it and registers it as local): accepted at load, in a section and in an agent's
    # options; checked against the registered models when an agent is created
    # (tests/core/test_config_local_at_create.py)
    text = (
        "agents:\n  - id: a\n    options: {summaries: {model: local}}\nsummaries:\n  model: local\n"
    )
    config = load_config(write(tmp_path, text), settings={"summaries": Summaries})
    assert config.sections["summaries"].model == "local"
    assert config.agents[0].options["summaries"] == {"model": "local"}


def test_a_typo_of_local_in_a_plugin_setting_is_hinted_at_local(tmp_path: Path) -> None:
    text = "models:\n  fast: {provider: openai, model: m}\nsummaries:\n  model: locl\n"
    err = fails(write(tmp_path, text), settings={"summaries": Summaries})
    assert err.path == "summaries.model"
    assert err.reason == (
        "unknown model 'locl' (models defined: fast; local runs when an agent's model is local); "
        "did you mean 'local'?"
    )


def test_a_sections_model_problem_is_told_once_not_at_each_agents_options(
    tmp_path: Path,
) -> None:
    # an agent's options layered over the section: only the keys they set are theirs
    text = (
        "models:\n  fast: {provider: openai, model: m}\nsummaries:\n  model: fsat\n"
        "agents:\n  - id: a\n    options:\n      summaries: {note: x}\n"
        "  - id: b\n    options:\n      summaries: {model: fsat}\n"
    )
    err = fails(write(tmp_path, text), settings={"summaries": Summaries})
    assert [p.path for p in err.problems] == [
        "summaries.model",
        "agents[1].options.summaries.model",
    ]


def test_missing_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yml"
    err = fails(missing)
    assert (err.source, err.path, err.reason) == (str(missing), "", "file not found")


def test_no_path_gives_defaults() -> None:
    config = load_config()
    assert (config.source, config.models, config.agents, config.sections) == (
        "<defaults>",
        {},
        [],
        {},
    )
    assert config.default_model is None


@pytest.mark.parametrize("text", ["", "# all commented out\n", "models:\nagents:\n"])
def test_empty_file_gives_defaults(tmp_path: Path, text: str) -> None:
    path = write(tmp_path, text)
    config = load_config(path, settings=SETTINGS)
    assert (config.source, config.models, config.agents, config.sections) == (str(path), {}, [], {})


def test_text_is_named_string_or_given_source() -> None:
    with pytest.raises(ConfigError) as info:
        load_config(text="x: 1\n")
    assert info.value.source == "<string>:1:1"
    with pytest.raises(ConfigError) as info:
        load_config(text="x: 1\n", source="inline")
    assert info.value.source == "inline:1:1"


def test_literal_api_key_is_rejected_without_echoing_it(tmp_path: Path) -> None:
    file = write(tmp_path, "models:\n  fast:\n    provider: x\n    api_key: sk-live-SECRET\n")
    err = fails(file)
    assert (err.source, err.path) == (f"{file}:4:5", "models.fast.api_key")
    assert "put the key in an environment variable and name it with api_key_env" in err.reason
    assert "SECRET" not in str(err)
    assert "SECRET" not in str(err.__cause__)


def test_api_key_env_must_be_a_variable_name(tmp_path: Path) -> None:
    err = fails(write(tmp_path, "models:\n  fast: {provider: x, api_key_env: sk-live-SECRET}\n"))
    assert err.path == "models.fast.api_key_env"
    assert "not the key itself" in err.reason
    assert "SECRET" not in str(err) + str(err.__cause__)


@pytest.mark.parametrize("written", ["$OPENAI_API_KEY", "${OPENAI_API_KEY}"])
def test_a_shell_variable_gets_told_dsh_yml_does_not_expand_it(
    tmp_path: Path, written: str
) -> None:
    text = f'models:\n  fast:\n    provider: x\n    api_key_env: "{written}"\n'
    err = fails(write(tmp_path, text))
    assert (err.path, err.reason) == (
        "models.fast.api_key_env",
        "must be the name of an environment variable; dsh.yml does not expand variables: "
        "drop the $ (api_key_env: OPENAI_API_KEY)",
    )
    url = written.replace("OPENAI_API_KEY", "BASE_URL")
    err = fails(write(tmp_path, f'models:\n  fast:\n    provider: x\n    base_url: "{url}/v1"\n'))
    assert (err.path, err.reason) == (
        "models.fast.base_url",
        "must be an http:// or https:// URL with a host, e.g. http://host:port/v1; "
        "dsh.yml does not expand variables: write the URL itself",
    )


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("https://${HOST}/v1", "holds a variable ($NAME or ${NAME})"),
        ("https://$HOST/v1", "holds a variable ($NAME or ${NAME})"),
        ("https://api.test/$VERSION", "holds a variable ($NAME or ${NAME})"),
        ("https://api.test/v1?api-key=${AZURE_KEY}", "holds a variable ($NAME or ${NAME})"),
        ("http://localhost:${PORT}/v1", "is not a valid URL (the port is not a number)"),
    ],
)
def test_a_shell_variable_inside_a_base_url_is_refused_too(
    tmp_path: Path, url: str, reason: str
) -> None:
    """It was sent as written (a host named ${HOST}: a request failing at run time, after
    dsh config check said ok), though config.md says such a variable is refused."""
    err = fails(write(tmp_path, f'models:\n  fast:\n    provider: x\n    base_url: "{url}"\n'))
    assert (err.path, err.reason) == (
        "models.fast.base_url",
        f"{reason}; dsh.yml does not expand variables: write the URL itself",
    )


def test_a_dollar_in_a_base_url_s_query_is_the_server_s(tmp_path: Path) -> None:
    text = "models:\n  fast:\n    provider: x\n    base_url: https://h/v1?$top=10\n"
    assert load_config(write(tmp_path, text)).models["fast"].base_url == "https://h/v1?$top=10"


def test_api_key_reads_the_environment_and_is_never_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DSH_TEST_KEY", "sk-live-SECRET")
    config = load_config(
        write(tmp_path, "models:\n  m: {provider: x, api_key_env: DSH_TEST_KEY}\n")
    )
    model = config.models["m"]
    assert model.api_key() == "sk-live-SECRET"
    assert model.api_key({"DSH_TEST_KEY": "other"}) == "other"
    for shown in (repr(model), str(model), model.model_dump_json(), repr(config), config.to_dict()):
        assert "SECRET" not in str(shown)
    assert "SECRET" not in str(model.model_dump())
    monkeypatch.delenv("DSH_TEST_KEY")
    assert model.api_key() is None
    assert ModelConfig(provider="x").api_key() is None


def test_models_are_plain_pydantic_for_code_too() -> None:
    agent = AgentConfig(id="a")
    assert (agent.model, agent.system_prompt, agent.queue_mode) == (None, "", "batch")
    with pytest.raises(ValidationError):
        AgentConfig(id="")
    with pytest.raises(ValidationError):
        ModelConfig(provider="x", max_retries=-1)


def test_find_config(tmp_path: Path) -> None:
    assert find_config(tmp_path, env={}) is None
    (tmp_path / "dsh.yaml").write_text("")
    assert find_config(tmp_path, env={}) == tmp_path / "dsh.yaml"
    (tmp_path / "dsh.yml").write_text("")
    with pytest.raises(ConfigError, match=r"dsh\.yaml also exists"):
        find_config(tmp_path, env={})
    # $DSH_CONFIG wins, relative to cwd (missing, it is refused: test_dsh_config_env.py)
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf/x.yml").write_text("")
    assert find_config(tmp_path, env={"DSH_CONFIG": "conf/x.yml"}) == tmp_path / "conf/x.yml"
    absolute = str(tmp_path / "conf/x.yml")
    assert find_config(Path("/"), env={"DSH_CONFIG": absolute}) == Path(absolute)


@pytest.mark.parametrize(
    ("option", "value", "expected"),
    [
        ("max_steps", "0", "option 'max_steps' must be an int > 0, not 0"),
        ("max_tokens", "-1", "option 'max_tokens' must be an int > 0, not -1"),
        ("max_request_retries", "yes", "option 'max_request_retries' must be an int >= 0"),
        ("queue_mode", "fifo", "option 'queue_mode' must be 'batch' or 'one-at-a-time'"),
        ("extra_roots", "/srv/data", "option 'extra_roots' must be a list of paths"),
        ("extra_roots", "[/srv, 3]", "option 'extra_roots' must be a list of paths"),
    ],
)
def test_core_keys_in_agent_options_are_checked_when_the_file_loads(
    tmp_path: Path, option: str, value: str, expected: str
) -> None:
    # the same rules the agent applies when it is built, but with the key's own place
    path = write(tmp_path, f"agents:\n  - id: main\n    options: {{{option}: {value}}}\n")
    err = fails(path)
    assert err.source == f"{path}:3:15"
    assert err.path == f"agents[0].options.{option}"
    assert err.reason.startswith(expected)


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("not a url", "must be an http:// or https:// URL with a host"),
        ("ftp://h/v1", "must be an http:// or https:// URL with a host"),
        ("http:///v1", "must be an http:// or https:// URL with a host"),
        ("http://h:port/v1", "is not a valid URL"),
        ("https://alice:s3cret@proxy.test/v1", "must not hold a user name or password"),
        ("https://alice:s3c/ret@proxy.test/v1", "must not hold a user name or password"),
        ("https://alice:s3c#ret@proxy.test/v1", "must not hold a user name or password"),
    ],
)
def test_base_url_is_checked_when_the_file_loads(tmp_path: Path, url: str, reason: str) -> None:
    text = f"models:\n  m:\n    provider: openai-compatible\n    base_url: {url}\n"
    err = fails(write(tmp_path, text))
    assert err.path == "models.m.base_url"
    assert err.reason.startswith(reason)
    assert "s3c" not in str(err) and "ret@" not in str(err)
