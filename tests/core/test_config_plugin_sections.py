"""dsh.yml plugin sections and an agent's plugin options: checked by the plugin's settings
model, misspellings suggested, sections of plugins not loaded or blocked, model names.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from config_support import (
    SETTINGS,
    CompactionSettings,
    Endpoint,
    PermissionsSettings,
    Summaries,
    fails,
    write,
)
from pydantic import BaseModel, ConfigDict

from dsh import DshError, PluginValidationError
from dsh.config import add_settings, load_config


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
    # a typo of a core key is said as one first (review rev-cli, finding 6)
    err = fails(write(tmp_path, "modles: {}\n"), settings={})
    assert err.reason == (
        "unknown key; did you mean 'models'? (nor is it a section of a loaded plugin; "
        "loaded plugins with settings: none)"
    )


def test_a_section_of_a_module_registered_by_its_name_says_how_to_name_it(
    tmp_path: Path,
) -> None:
    """``scripted_harness(plugins=[dsh_vault])`` registers the module as 'dsh_vault':
    its ``vault:`` section is said to need ``("vault", dsh_vault)``, not suggested to be
    renamed to 'dsh_vault' (docs/testing.md names plugins by their entry point's name)."""
    err = fails(write(tmp_path, "vault:\n  motto: hi\n"), settings={"dsh_vault": Summaries})
    assert err.reason.endswith(
        "plugin 'dsh_vault' is registered under its module's name: give it as "
        "('vault', dsh_vault) in plugins= to read section 'vault'"
    )
    err = fails(write(tmp_path, "vault:\n  motto: hi\n"), settings={"pkg.vault_plugin": Summaries})
    assert err.reason.endswith(
        "give it as ('vault', vault_plugin) in plugins= to read section 'vault'"
    )
    err = fails(write(tmp_path, "vaults:\n  motto: hi\n"), settings={"dsh_vault": Summaries})
    assert "registered under its module's name" not in err.reason


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


def test_plugin_settings_typed_model_name_must_name_a_defined_model(tmp_path: Path) -> None:
    models = "models:\n  fast: {provider: x}\n"
    settings = {"summaries": Summaries}
    ok = load_config(write(tmp_path, f"{models}summaries:\n  note: fsat\n"), settings=settings)
    assert ok.sections["summaries"] == Summaries(note="fsat")

    file = write(tmp_path, f"{models}summaries:\n  model: fsat\n")
    err = fails(file, settings)
    assert (err.source, err.path) == (f"{file}:4:3", "summaries.model")
    assert err.reason == (
        "unknown model 'fsat' (models defined: fast; local runs when an agent's model is "
        "local); did you mean 'fast'?"
    )

    err = fails(write(tmp_path, "summaries:\n  fallback: fast\n"), settings)
    assert (err.path, err.reason) == (
        "summaries.fallback",
        "unknown model 'fast' (models defined: none; local runs when an agent's model is local)",
    )


def test_plugin_named_like_a_core_key_is_refused() -> None:
    with pytest.raises(PluginValidationError, match="core config key"):
        load_config(text="{}", settings={"models": PermissionsSettings})


@pytest.mark.parametrize("section", ["models", "agents", "model"])
def test_a_section_named_like_a_core_key_blames_the_plugin_that_registered_it(
    section: str,
) -> None:
    settings: dict[str, type[BaseModel]] = {}
    with pytest.raises(PluginValidationError) as info:
        add_settings(settings, "audit", PermissionsSettings, section)
    assert info.value.plugin == "audit"
    assert str(info.value) == (
        f"plugin 'audit': its settings section {section!r} (register(PermissionsSettings, "
        f"section={section!r})) is a core key of dsh.yml; pass another section= or leave it "
        "out (the plugin's name)"
    )
    assert settings == {}


class Guard(BaseModel):
    x: int = 1


@pytest.mark.parametrize("order", [("guard", "audit"), ("audit", "guard")])
def test_two_plugins_registering_one_section_are_both_named(order: tuple[str, str]) -> None:
    # guard's section is its own name; audit passes section="guard"
    settings: dict[str, type[BaseModel]] = {}
    first, second = order
    add_settings(settings, first, Guard, None if first == "guard" else "guard")
    with pytest.raises(DshError) as info:
        add_settings(settings, second, Guard, None if second == "guard" else "guard")
    assert str(info.value) == (
        f"plugins {first!r} and {second!r} both register settings for section 'guard'; "
        "give one of them another section="
    )


def test_one_plugin_registering_its_section_twice_says_so() -> None:
    settings: dict[str, type[BaseModel]] = {}
    add_settings(settings, "guard", Guard)
    with pytest.raises(DshError) as info:
        add_settings(settings, "guard", PermissionsSettings)
    assert str(info.value) == (
        "plugin 'guard' registers settings for section 'guard' twice (register() called "
        "twice in its register_settings); register one model"
    )
    assert settings == {"guard": Guard}


@dataclasses.dataclass
class DataclassSettings:
    level: int = 1


def test_settings_registered_as_a_class_that_is_not_a_model_say_what_it_must_be() -> None:
    """A dataclass is a class: "register the class itself" would send its author round in
    a circle; it must become a pydantic model."""
    with pytest.raises(DshError) as info:
        add_settings({}, "loud", DataclassSettings)
    assert str(info.value) == (
        "plugin 'loud' registered settings DataclassSettings, a class that is not a "
        "pydantic model; it must be a subclass of pydantic.BaseModel"
    )


def test_settings_registered_as_an_instance_say_to_register_the_class() -> None:
    with pytest.raises(DshError) as info:
        add_settings({}, "guard", Guard())
    assert str(info.value) == (
        "plugin 'guard' registered settings an instance of Guard, which is not a pydantic "
        "model class; register the class itself (register(MySettings))"
    )


def test_a_bad_value_in_a_plugin_section_is_not_kept_in_the_error_chain(tmp_path: Path) -> None:
    # `dsh -v` prints the cause's traceback: a plugin model that does not hide its input
    # would show the value, which may be a secret pasted into the wrong key
    path = write(tmp_path, "permissions:\n  mode: sk-live-0123456789abcdef\n")
    err = fails(path)
    assert str(err).startswith(f"{path}:2:3: permissions.mode: ")
    assert err.__cause__ is None
    assert "sk-live" not in str(err)


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


def test_a_section_asked_for_with_its_model_is_that_model_or_none(tmp_path: Path) -> None:
    """``config.section(name, Model)`` is typed for a plugin's mypy --strict code (the
    one-argument form is ``Any``); a section of another type is said, not returned."""
    config = load_config(write(tmp_path, "permissions:\n  mode: ask\n"), settings=SETTINGS)
    assert isinstance(config.section("permissions", PermissionsSettings), PermissionsSettings)
    assert config.section("compaction", CompactionSettings) is None
    with pytest.raises(TypeError) as caught:
        config.section("permissions", Summaries)
    assert str(caught.value) == (
        "config.section('permissions', Summaries): the section is a PermissionsSettings "
        "(the settings model registered for 'permissions')"
    )


def test_a_section_of_a_same_named_class_says_which_module_each_is_from(tmp_path: Path) -> None:
    """Two settings classes both named ``PermissionsSettings`` (one module's copy asked
    for, another registered): the error tells them apart by module."""
    namespace: dict[str, object] = {"__name__": "someone_elses.settings"}
    exec("from pydantic import BaseModel\nclass PermissionsSettings(BaseModel): pass", namespace)
    other = namespace["PermissionsSettings"]
    assert isinstance(other, type)
    config = load_config(write(tmp_path, "permissions:\n  mode: ask\n"), settings=SETTINGS)
    with pytest.raises(TypeError) as caught:
        config.section("permissions", other)
    assert str(caught.value) == (
        "config.section('permissions', someone_elses.settings.PermissionsSettings): the "
        f"section is a {PermissionsSettings.__module__}.PermissionsSettings (the settings "
        "model registered for 'permissions')"
    )
