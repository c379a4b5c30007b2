"""A key variable that is set but blank (empty, or spaces only: ``OPENAI_API_KEY=' '``)
holds no key, as before, but is said to be set and blank, not "not set" (a review: the
user sees the variable set and is told it is not). So for each provider's own variable,
a variable ``api_key_env`` names, and one whose name is hidden (``may_be_a_key``): in the
AUTH error (``dsh config check``'s warning), in ``dsh models`` and in why ``local`` is
used when no provider key is set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_m_args_support import _quiet_env  # noqa: F401 (an autouse fixture)

from dsh._provider_table import BUILT_IN
from dsh.cli import main
from dsh.config import ModelConfig
from dsh.errors import ModelError
from dsh.llm.providers import build_model

BLANKS = ["", " ", "  \t"]
PASTED = "gsk_8fJ2kLmQ9xYzR4tW7vBn3HdPq"  # a valid variable name, but a key


def _auth_error(name: str, config: ModelConfig, env: dict[str, str]) -> str:
    with pytest.raises(ModelError) as caught:
        build_model(name, config, env=env).api_key()
    assert caught.value.code == "AUTH"
    return caught.value.message


@pytest.mark.parametrize("blank", BLANKS)
@pytest.mark.parametrize("provider", [p for p, f in BUILT_IN.items() if f.api_key_env])
def test_a_providers_own_variable_set_blank_is_said_to_be_blank(provider: str, blank: str) -> None:
    variable = BUILT_IN[provider].api_key_env
    assert variable is not None
    said = _auth_error("m", ModelConfig(provider=provider), {variable: blank})
    assert said == (
        f"model 'm': the environment variable {variable} is set but blank (it holds "
        f"{provider}'s API key; api_key_env in a models: entry of dsh.yml names another)"
    )


@pytest.mark.parametrize("blank", BLANKS)
def test_a_variable_an_entry_names_set_blank_is_said_to_be_blank(blank: str) -> None:
    config = ModelConfig(provider="openai", api_key_env="MY_GW_KEY")
    assert _auth_error("gw", config, {"MY_GW_KEY": blank}) == (
        "model 'gw': the environment variable MY_GW_KEY (models.gw.api_key_env) is set but "
        "blank (it holds the API key)"
    )
    pasted = ModelConfig(provider="openai", api_key_env=PASTED)
    said = _auth_error("gw", pasted, {PASTED: blank})
    assert said == (
        "model 'gw': the environment variable named by models.gw.api_key_env is set but "
        "blank (it holds the API key)"
    )


def test_an_unset_variable_is_still_not_set() -> None:
    config = ModelConfig(provider="openai", api_key_env="MY_GW_KEY")
    assert _auth_error("gw", config, {}).endswith(
        "MY_GW_KEY (models.gw.api_key_env) is not set (it holds the API key)"
    )


def test_config_check_and_dsh_models_say_blank(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    Path("dsh.yml").write_text(
        f"models:\n  a: {{provider: openai, api_key_env: MY_GW_KEY}}\n"
        f"  b: {{provider: openai, api_key_env: {PASTED}}}\n"
        "  c: {provider: openai, api_key_env: MY_OTHER_KEY}\n"
    )
    monkeypatch.setenv("MY_GW_KEY", " ")
    monkeypatch.setenv(PASTED, "")
    assert main(["config", "check"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert [line.split(": ", 3)[-1] for line in err] == [
        "model 'a': the environment variable MY_GW_KEY (models.a.api_key_env) is set but "
        "blank (it holds the API key)",
        "model 'b': the environment variable named by models.b.api_key_env is set but "
        "blank (it holds the API key)",
        "model 'c': the environment variable MY_OTHER_KEY (models.c.api_key_env) is not "
        "set (it holds the API key)",
    ]
    assert main(["models", "--json"]) == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    assert [(rows[n]["api_key_set"], rows[n]["api_key_blank"]) for n in "abc"] == [
        (False, True),
        (False, True),
        (False, False),
    ]
    assert rows["local"]["api_key_blank"] is None
    assert main(["models"]) == 0
    table = capsys.readouterr().out
    assert "MY_GW_KEY (set but blank)" in table
    assert "named by models.b.api_key_env (set but blank)" in table
    assert "MY_OTHER_KEY (not set)" in table
    assert PASTED not in table


def test_local_is_used_saying_a_provider_key_is_blank(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for variable in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "DEEPSEEK_API_KEY"):
        monkeypatch.setenv(variable, " ")
    assert main(["models"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        "dsh run and dsh chat use local: no model is configured and no provider key is set "
        "(ANTHROPIC_API_KEY, OPENAI_API_KEY and DEEPSEEK_API_KEY are set but blank)"
    )
    monkeypatch.setenv("ANTHROPIC_API_KEY", "")
    monkeypatch.delenv("DEEPSEEK_API_KEY")
    assert main(["models"]) == 0
    assert (
        capsys.readouterr()
        .out.splitlines()[-1]
        .endswith("no provider key is set (ANTHROPIC_API_KEY and OPENAI_API_KEY are set but blank)")
    )
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    assert main(["models"]) == 0
    assert (
        capsys.readouterr()
        .out.splitlines()[-1]
        .endswith("no provider key is set (OPENAI_API_KEY is set but blank)")
    )
