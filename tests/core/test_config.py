"""dsh.yml loading: models, agents, plugin sections, and errors with file, line and path."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Literal

import pytest
import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from dsh import ConfigError, PluginValidationError
from dsh.config import AgentConfig, ModelConfig, ModelName, find_config, load_config


class PermissionsSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    mode: Literal["ask", "allow", "deny"] = "ask"
    allow: list[str] = []


class CompactionSettings(BaseModel):  # leaves `extra` unset, as many plugin authors will
    threshold: float = 0.8

    class Keep(BaseModel):
        turns: int = 2

    keep: Keep = Keep()


SETTINGS: dict[str, type[BaseModel]] = {
    "permissions": PermissionsSettings,
    "compaction": CompactionSettings,
}

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


def write(tmp_path: Path, text: str, name: str = "dsh.yml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def fails(path: Path, settings: dict[str, type[BaseModel]] = SETTINGS) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load_config(path, settings=settings)
    return info.value


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
    assert config.section("shell") is None

    again = load_config(
        write(tmp_path, yaml.safe_dump(config.to_dict()), "again.yml"), settings=SETTINGS
    )
    assert again.models == config.models
    assert again.agents == config.agents
    assert again.sections == config.sections
    assert again.default_model == config.default_model


def test_section_of_a_plugin_that_is_not_loaded(tmp_path: Path) -> None:
    path = write(tmp_path, "models: {}\nshell:\n  allow: [ls]\n")
    err = fails(path)
    assert err.source == f"{path}:2:1"
    assert err.path == "shell"
    assert err.reason == (
        "section 'shell' is for a plugin that is not installed or not loaded "
        "(loaded plugins with settings: compaction, permissions)"
    )
    assert str(err).startswith(f"{path}:2:1: shell: section 'shell'")


def test_misspelt_section_suggests_the_known_key(tmp_path: Path) -> None:
    err = fails(write(tmp_path, "permisions:\n  mode: ask\n"))
    assert err.reason.endswith("did you mean 'permissions'?")
    err = fails(write(tmp_path, "modles: {}\n"), settings={})
    assert "(loaded plugins with settings: none)" in err.reason
    assert err.reason.endswith("did you mean 'models'?")


def test_plugin_section_is_validated_by_its_settings_model(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        models: {}
        permissions:
          allow: [read_file]
          mode: sometimes
        """,
    )
    err = fails(path)
    assert err.source == f"{path}:4:3"
    assert err.path == "permissions.mode"
    assert err.reason == "Input should be 'ask', 'allow' or 'deny'"
    assert err.__cause__ is None  # the model does not hide its input (see below)


def test_empty_plugin_section_means_its_defaults(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, "permissions:\n"), settings=SETTINGS)
    assert config.section("permissions") == PermissionsSettings()


@pytest.mark.parametrize(
    ("text", "path", "where"),
    [
        ("compaction:\n  treshold: 0.5\n", "compaction.treshold", "2:3"),
        ("compaction:\n  keep:\n    turns: 1\n    tunrs: 2\n", "compaction.keep.tunrs", "4:5"),
    ],
)
def test_unknown_key_in_plugin_section_fails_even_if_model_ignores_extras(
    tmp_path: Path, text: str, path: str, where: str
) -> None:
    file = write(tmp_path, text)
    err = fails(file)
    assert (err.path, err.source) == (path, f"{file}:{where}")
    assert err.reason.startswith("unknown key")


def test_plugin_model_with_explicit_extra_ignore_is_respected(tmp_path: Path) -> None:
    class Lenient(BaseModel):
        model_config = ConfigDict(extra="ignore")
        level: int = 0

    config = load_config(
        write(tmp_path, "lenient: {level: 2, later: x}\n"), settings={"lenient": Lenient}
    )
    assert config.section("lenient") == Lenient(level=2)


@pytest.mark.parametrize(
    ("text", "path", "line", "hint"),
    [
        (
            "models:\n  fast:\n    provider: x\n    timout: 3\n",
            "models.fast.timout",
            4,
            "did you mean 'timeout'?",
        ),
        (
            "agents:\n  - id: a\n  - id: b\n    sytem_prompt: hi\n",
            "agents[1].sytem_prompt",
            4,
            "did you mean 'system_prompt'?",
        ),
    ],
)
def test_unknown_key_in_models_and_agents(
    tmp_path: Path, text: str, path: str, line: int, hint: str
) -> None:
    file = write(tmp_path, text)
    err = fails(file)
    assert err.path == path
    assert err.source == f"{file}:{line}:5"
    assert err.reason.startswith("unknown key (expected one of: ")
    assert err.reason.endswith(hint)


def test_bad_value_names_path_and_line(tmp_path: Path) -> None:
    file = write(tmp_path, "models:\n  gpt-4.1:\n    provider: openai\n    timeout: 0\n")
    err = fails(file)
    assert (err.source, err.path) == (f"{file}:4:5", 'models["gpt-4.1"].timeout')
    assert err.reason == "Input should be greater than 0"


def test_missing_field_points_at_its_parent(tmp_path: Path) -> None:
    file = write(tmp_path, "models:\n  fast:\n    timeout: 3\n")
    err = fails(file)
    assert (err.source, err.path, err.reason) == (
        f"{file}:2:3",
        "models.fast.provider",
        "Field required",
    )


def test_first_problem_in_the_file_is_reported(tmp_path: Path) -> None:
    file = write(tmp_path, "agents:\n  - id: 5\nmodels:\n  fast: {provider: x, timeout: -1}\n")
    err = fails(file)
    assert (err.source, err.path) == (f"{file}:2:5", "agents[0].id")


def test_yaml_syntax_error_has_line_and_column(tmp_path: Path) -> None:
    file = write(tmp_path, "models:\n  fast:\n    provider: x\n   timeout: 3\n")
    err = fails(file)
    assert err.source == f"{file}:4:4"
    assert err.path == ""
    assert err.reason.startswith("invalid YAML: ")
    assert isinstance(err.__cause__, yaml.YAMLError)


def test_agent_referencing_unknown_model(tmp_path: Path) -> None:
    file = write(tmp_path, "models:\n  fast: {provider: x}\nagents:\n  - id: a\n    model: fats\n")
    err = fails(file)
    assert (err.source, err.path) == (f"{file}:5:5", "agents[0].model")
    assert err.reason == (
        "unknown model 'fats' (models defined: fast; local is built in); did you mean 'fast'?"
    )


class Summaries(BaseModel):
    model: ModelName | None = None
    fallback: ModelName = "builtin"  # the plugin's own default is not the file's problem
    note: str = "not a model name"


def test_plugin_settings_typed_model_name_must_name_a_defined_model(tmp_path: Path) -> None:
    models = "models:\n  fast: {provider: x}\n"
    settings = {"summaries": Summaries}
    ok = load_config(write(tmp_path, f"{models}summaries:\n  note: fsat\n"), settings=settings)
    assert ok.sections["summaries"] == Summaries(note="fsat")

    file = write(tmp_path, f"{models}summaries:\n  model: fsat\n")
    err = fails(file, settings)
    assert (err.source, err.path) == (f"{file}:4:3", "summaries.model")
    assert err.reason == (
        "unknown model 'fsat' (models defined: fast; local is built in); did you mean 'fast'?"
    )

    err = fails(write(tmp_path, "summaries:\n  fallback: fast\n"), settings)
    assert (err.path, err.reason) == (
        "summaries.fallback",
        "unknown model 'fast' (models defined: none; local is built in)",
    )


def test_default_model_must_be_defined(tmp_path: Path) -> None:
    file = write(tmp_path, "model: big\n")
    err = fails(file)
    assert (err.source, err.path) == (f"{file}:1:1", "model")
    assert err.reason == "unknown model 'big' (models defined: none; local is built in)"


def test_local_names_the_bundled_model_without_an_entry(tmp_path: Path) -> None:
    # the dsh command starts it (docs/models.md); an entry named local is used instead
    text = "model: local\nagents:\n  - id: a\n    model: local\nsummaries:\n  model: local\n"
    config = load_config(write(tmp_path, text), settings={"summaries": Summaries})
    assert config.default_model == "local"
    assert config.agents[0].model == "local"


def test_duplicate_agent_id_names_the_second(tmp_path: Path) -> None:
    file = write(tmp_path, "agents:\n  - id: a\n  - id: b\n  - id: a\n")
    err = fails(file)
    assert (err.source, err.path) == (f"{file}:4:5", "agents[2].id")
    assert err.reason == "duplicate agent id 'a' (first at agents[0].id)"


def test_duplicate_yaml_key_is_not_silently_dropped(tmp_path: Path) -> None:
    file = write(tmp_path, "models:\n  fast: {provider: x}\n  fast: {provider: y}\n")
    err = fails(file)
    assert (err.source, err.path, err.reason) == (
        f"{file}:3:3",
        "models.fast",
        "duplicate key (first on line 2)",
    )


def test_merge_keys_are_not_duplicates_and_errors_point_at_the_override(tmp_path: Path) -> None:
    text = "models:\n  a: &base {provider: x, timeout: 2}\n  b:\n    <<: *base\n    timeout: 0\n"
    file = write(tmp_path, text)
    err = fails(file)
    assert (err.source, err.path) == (f"{file}:5:5", "models.b.timeout")
    ok = load_config(write(tmp_path, text.replace("timeout: 0", "timeout: 9"), "ok.yml"))
    assert (ok.models["b"].provider, ok.models["b"].timeout) == ("x", 9.0)


@pytest.mark.parametrize(
    ("text", "path", "kind"),
    [
        ("agents:\n  - id: a\n    options: {yes: 1}\n", "agents[0].options.yes", "bool"),
        ("models:\n  fast: {provider: x, headers: {1: a}}\n", 'models.fast.headers["1"]', "int"),
    ],
)
def test_keys_must_be_strings(tmp_path: Path, text: str, path: str, kind: str) -> None:
    err = fails(write(tmp_path, text))
    assert err.path == path
    assert err.reason == f"keys must be strings, this one is read as {kind}; quote it"


def test_top_level_must_be_a_mapping(tmp_path: Path) -> None:
    err = fails(write(tmp_path, "- a\n- b\n"))
    assert err.reason == "the file must hold a mapping of keys, not a list"


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


def test_plugin_named_like_a_core_key_is_refused() -> None:
    with pytest.raises(PluginValidationError, match="core config key"):
        load_config(text="{}", settings={"models": PermissionsSettings})


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
    # $DSH_CONFIG wins, relative to cwd, and is returned even if missing
    assert find_config(tmp_path, env={"DSH_CONFIG": "conf/x.yml"}) == tmp_path / "conf/x.yml"
    assert find_config(tmp_path, env={"DSH_CONFIG": "/etc/dsh.yml"}) == Path("/etc/dsh.yml")


def test_aliases_that_expand_past_the_limit_are_refused_quickly(tmp_path: Path) -> None:
    lines = ['l0: &l0 ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    for level in range(1, 9):  # 10**9 values once expanded, a dozen lines of text
        lines.append(f"l{level}: &l{level} [" + ", ".join([f"*l{level - 1}"] * 10) + "]")
    lines += ["agents:", "  - id: main", "    options: {x: *l8}"]
    path = write(tmp_path, "\n".join(lines) + "\n")

    err = fails(path)

    assert str(err).startswith(f"{path}:1:1: ")
    assert "aliases expand it to more than 100,000 values" in str(err)


def test_aliases_within_the_limit_load(tmp_path: Path) -> None:
    text = "agents:\n  - id: a\n    options: &o {x: [1, 2, 3]}\n  - id: b\n    options: *o\n"
    config = load_config(write(tmp_path, text), settings=SETTINGS)
    assert [a.options for a in config.agents] == [{"x": [1, 2, 3]}] * 2


def test_a_bad_value_in_a_plugin_section_is_not_kept_in_the_error_chain(tmp_path: Path) -> None:
    # `dsh -v` prints the cause's traceback: a plugin model that does not hide its input
    # would show the value, which may be a secret pasted into the wrong key
    path = write(tmp_path, "permissions:\n  mode: sk-live-0123456789abcdef\n")
    err = fails(path)
    assert str(err).startswith(f"{path}:2:3: permissions.mode: ")
    assert err.__cause__ is None
    assert "sk-live" not in str(err)


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


def test_a_key_that_is_not_ascii_is_shown_as_written(tmp_path: Path) -> None:
    err = fails(write(tmp_path, "permissions:\n  tïmeout: 3\n"))
    assert err.path == 'permissions["tïmeout"]'


@pytest.mark.parametrize(
    ("options", "where", "reason"),
    [
        ("{permissions: {mode: sometimes}}", "agents[0].options.permissions.mode", "'ask'"),
        ("{permissions: {alow: [x]}}", "agents[0].options.permissions.alow", "'allow'"),
        ("{compaction: {threshold: high}}", "agents[0].options.compaction.threshold", "number"),
        ("{compaction: {keep: {turn: 1}}}", "agents[0].options.compaction.keep.turn", "unknown"),
        ("{permision: {mode: ask}}", "agents[0].options.permision", "'permissions'"),
        ("{max_token: 5}", "agents[0].options.max_token", "did you mean 'max_tokens'"),
    ],
)
def test_agent_options_for_a_loaded_plugin_or_near_a_known_key_are_checked_at_load(
    tmp_path: Path, options: str, where: str, reason: str
) -> None:
    """`options.<plugin>` is checked by that plugin's settings model, with the key's own
    path and line; a key one typo away from a core option or a loaded plugin's name is
    refused instead of silently ignored."""
    path = write(tmp_path, f"agents:\n  - id: main\n    options: {options}\n")
    err = fails(path)
    assert err.path == where
    assert err.source.startswith(f"{path}:3:")
    assert reason in err.reason


def test_two_letters_swapped_in_a_short_plugin_name_are_a_typo(tmp_path: Path) -> None:
    class Audit(BaseModel):
        level: str = "info"

    text = "agents:\n  - id: main\n    options: {audti: {level: debug}}\n"
    err = fails(write(tmp_path, text), settings={"audit": Audit})
    assert err.path == "agents[0].options.audti"
    assert err.reason.endswith("; did you mean 'audit'?")


def test_other_agent_options_are_free_for_plugins(tmp_path: Path) -> None:
    # alike but not a typo of a known key: max_steps, max_tokens, system_prompt, queue_mode
    free = "{tone: dry, max_turns: 3, max_cost: 1, prompt: p, queue: q, compaction: {}}"
    text = f"agents:\n  - id: main\n    options: {free}\n"
    (agent,) = load_config(write(tmp_path, text), settings=SETTINGS).agents
    assert set(agent.options) == {"tone", "max_turns", "max_cost", "prompt", "queue", "compaction"}


def test_options_of_a_plugin_turned_off_are_not_checked(tmp_path: Path) -> None:
    # `-p no:permission`: its option is left alone, though it is near 'permissions'
    text = "agents:\n  - id: main\n    options: {permission: {x: 1}}\n"
    assert "'permissions'" in fails(write(tmp_path, text)).reason
    blocked = {"permission"}.__contains__
    config = load_config(write(tmp_path, text), settings=SETTINGS, blocked=blocked)
    assert config.agents[0].options == {"permission": {"x": 1}}


class Endpoint(BaseModel):
    model_config = ConfigDict(extra="forbid")
    url: str  # required: the section gives it, an agent need not
    low: int = 0
    high: int = 10

    @model_validator(mode="after")
    def _ordered(self) -> Endpoint:
        if self.low > self.high:
            raise ValueError("low must not be above high")
        return self


def test_an_agents_plugin_options_are_checked_over_the_plugins_section(tmp_path: Path) -> None:
    """As the plugin layers them: a required field the section gives is not missing, and
    a rule across fields sees the section's values."""
    settings = {"endpoint": Endpoint, "summaries": Summaries}
    section = "endpoint: {url: http://x, high: 100}\n"
    ok = f"{section}agents:\n  - id: a\n    options: {{endpoint: {{low: 50}}}}\n"
    assert load_config(write(tmp_path, ok), settings=settings).agents[0].options == {
        "endpoint": {"low": 50}
    }
    bad = f"{section}agents:\n  - id: a\n    options: {{endpoint: {{low: 200}}}}\n"
    err = fails(write(tmp_path, bad), settings)
    assert (err.path, err.reason) == ("agents[0].options.endpoint", "low must not be above high")


def test_a_model_named_in_an_agents_plugin_options_must_be_defined(tmp_path: Path) -> None:
    text = "models:\n  fast: {provider: x}\nagents:\n  - id: a\n"
    text += "    options: {summaries: {model: fsat}}\n"
    file = write(tmp_path, text)
    err = fails(file, {"summaries": Summaries})
    assert err.path == "agents[0].options.summaries.model"
    assert err.reason.endswith("did you mean 'fast'?")
