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
