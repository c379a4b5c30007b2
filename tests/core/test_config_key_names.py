"""A key pasted into ``api_key_env`` is never repeated (``may_be_a_key``): not in the AUTH
error (kept in the session file too), not in `dsh config check`'s warning, not by `dsh
models`; a variable's name is. The keys are the shapes real providers hand out that the
check of the field (letters, digits and ``_``) lets through.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_m_args_support import _quiet_env  # noqa: F401 (an autouse fixture)

from dsh.cli import main
from dsh.config import ModelConfig
from dsh.errors import ModelError
from dsh.llm.providers import build_model

# Each passes the check of api_key_env: a valid variable name that is a key.
KEYS = {
    "groq": "gsk_" + "8fJ2kLmN0pQrStUvWxYz1234AbCdEfGhIjKlMnOpQrStUvWxYz12",
    "google": "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
    "aws id": "AKIAIOSFODNN7EXAMPLE",
    "aws secret": "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY12",
    "github": "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    "github pat": "github_pat_11ABCDEFG0" + "a1b2c3D4_" + "x" * 50,
    "hex 40": "a94a8fe5ccb19ba61c4c0873d391e987982fbbd3",
    "hex 12": "a94a8fe5ccb1",
    "base64": "dGhpc2lzYXNlY3JldHRva2Vu",
    "hugging face": "hf_" + "QjWpuSAoBUKkMKNCpKAhgCbsdJzVZYpdrb",
    "hugging face org": "api_org_" + "QjWpuSAoBUKkMKNCpKAhgCbsdJzVZYpdrb",
    "hugging face lower": "hf_" + "qjwpusaobukkmkncpkahgcbsdjzvzypdrb",
    "shopify": "shpat_" + "0123456789abcdef0123456789abcdef",
    "stripe": "sk_live_" + "51H8a2bC3d4E5f6G7h8",
    "slack-like": "xoxb_1234567890_abcdefghijkl",
    "upper and digits": "KEY_9F8E7D6C5B4A3210FEDC",
    "lower and digits": "tok_9f8e7d6c5b4a3210fedc",
    "mixed letters": "api_AbCdEfGhIjKlMnOpQrStUv",
    # short, one case, few digits: a digit before a letter gives them away
    "short hex": "cd18fc9f",
    "short lower": "t3j2p3sc",
    "short upper": "SG4NW7Z7THBK",
}
# What no check lets into dsh.yml, but a config made in code may hold.
NOT_NAMES = {
    "openai": "sk-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0U1v2W3x4",
    "anthropic": "sk-ant-api03-" + "Ab3dEf6hIj9kLmN0pQrS",
    "deepseek hex": "0123456789abcdef0123456789abcdef",
    "mailchimp": "0123456789abcdef0123456789abcdef-us21",
}
NAMES = [
    "MY_GW_KEY",
    "gw_key_2",
    "GW_KEY_2",
    "AZURE_OPENAI_API_KEY",
    "MY_KEY",
    "GATEWAY_TOKEN",
    "S3_KEY",
    "OPENAI_API_KEY_V2",
]


def _auth_error(value: str) -> str:
    config = ModelConfig(provider="openai-compatible", base_url="http://h/v1")
    model = build_model("m", config.model_copy(update={"api_key_env": value}), env={})
    with pytest.raises(ModelError) as caught:
        model.api_key()
    return str(caught.value)


@pytest.mark.parametrize("key", [*KEYS.values(), *NOT_NAMES.values()], ids=[*KEYS, *NOT_NAMES])
def test_the_auth_error_does_not_repeat_a_key(key: str) -> None:
    said = _auth_error(key)
    assert key not in said and "named by models.m.api_key_env" in said
    assert key.split("_")[-1] not in said


@pytest.mark.parametrize("name", NAMES)
def test_the_auth_error_names_a_variable(name: str) -> None:
    assert f"the environment variable {name} (models.m.api_key_env)" in _auth_error(name)


def _config(values: list[str]) -> Path:
    path = Path.cwd() / "dsh.yml"
    lines = [f"  m{i}: {{provider: openai, api_key_env: {v}}}" for i, v in enumerate(values)]
    path.write_text("models:\n" + "\n".join(lines) + "\n")
    return path


def test_config_check_warns_without_repeating_a_key(
    capsys: pytest.CaptureFixture[str],
) -> None:
    values = [*KEYS.values(), *NAMES]
    _config(values)
    assert main(["config", "check"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == len(values)
    for i, (line, value) in enumerate(zip(err, values, strict=True)):
        assert line.startswith("dsh: warning: ")
        if value in NAMES:
            assert f"variable {value} (models.m{i}.api_key_env) is not set" in line
        else:
            assert value not in line and f"named by models.m{i}.api_key_env is not" in line


def test_dsh_models_does_not_repeat_a_key(capsys: pytest.CaptureFixture[str]) -> None:
    """In --json a hidden name is null, and ``api_key_env_hidden`` says why (a script
    must not take prose for a variable's name); the table says which field names it."""
    values = [*KEYS.values(), *NAMES]
    _config(values)
    assert main(["models", "--json"]) == 0
    out, err = capsys.readouterr()
    rows = {row["name"]: row for row in json.loads(out)}
    for i, value in enumerate(values):
        row = rows[f"m{i}"]
        shown = (value, False) if value in NAMES else (None, True)
        assert (row["api_key_env"], row["api_key_env_hidden"], row["api_key_set"]) == (
            *shown,
            False,
        )
    assert (rows["local"]["api_key_env"], rows["local"]["api_key_env_hidden"]) == (None, False)
    assert main(["models"]) == 0
    table, table_err = capsys.readouterr()
    for said in (out, err, table, table_err):
        assert not [key for key in KEYS.values() if key in said]
        assert not [key.split("_")[-1] for key in KEYS.values() if key.split("_")[-1] in said]
    assert "named by models.m0.api_key_env (not set)" in table
    assert "MY_GW_KEY (not set)" in table
