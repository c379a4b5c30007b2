"""`dsh config check` (cli.py), run in-process through ``dsh.cli.main``: what the mutation
review of the command line found no test for (docs/cli.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_m_args_support import _quiet_env  # noqa: F401 (an autouse fixture)

from dsh.cli import main

# -- dsh config check ------------------------------------------------------------------


def test_config_check_without_a_config_says_the_defaults_apply(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["config", "check"]) == 0
    assert capsys.readouterr() == ("", "dsh: no dsh.yml here; defaults apply\n")


def test_config_check_reports_two_config_files_as_a_problem_with_status_1(
    capsys: pytest.CaptureFixture[str],
) -> None:
    (Path.cwd() / "dsh.yml").write_text("models: {}\n")
    (Path.cwd() / "dsh.yaml").write_text("models: {}\n")
    assert main(["config", "check"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("dsh: ") and "keep one of the two" in err


def test_config_check_reports_a_missing_file_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["-c", str(tmp_path / "missing.yml"), "config", "check"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("dsh: ") and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.plugins("persistence")
def test_config_check_skips_the_section_of_a_plugin_blocked_with_p_no(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("DSH_LOAD_PLUGINS")
    path = tmp_path / "dsh.yml"
    path.write_text("persistence:\n  directory: sessions\n")
    assert main(["-p", "no:persistence", "-c", str(path), "config", "check"]) == 0
    assert capsys.readouterr().out == f"{path}: ok\n"


def test_config_check_warns_about_an_unset_key_variable_and_still_exits_0(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """It said "ok" alone, and the first request of dsh run failed (AUTH)."""
    monkeypatch.delenv("MY_MISSING_KEY", raising=False)
    path = Path.cwd() / "dsh.yml"
    path.write_text(
        "model: x\nmodels:\n"
        "  x: {provider: openai, api_key_env: MY_MISSING_KEY}\n"
        "  y: {provider: deepseek}\n"  # the provider's own variable, unset too
        "  z: {provider: openai-compatible, base_url: 'http://127.0.0.1:9/v1'}\n"  # no key
    )
    assert main(["config", "check"]) == 0
    out, err = capsys.readouterr()
    assert out == f"{path}: ok\n"
    assert err == (
        f"dsh: warning: {path}:3:25: model 'x': the environment variable MY_MISSING_KEY "
        "(models.x.api_key_env) is not set (it holds the API key)\n"
        f"dsh: warning: {path}:4:3: model 'y': the environment variable DEEPSEEK_API_KEY is "
        "not set (it holds deepseek's API key; api_key_env in a models: entry of dsh.yml "
        "names another)\n"
    )
    monkeypatch.setenv("MY_MISSING_KEY", "k")
    monkeypatch.setenv("DEEPSEEK_API_KEY", "k")
    assert main(["config", "check"]) == 0
    assert capsys.readouterr() == (f"{path}: ok\n", "")
