"""A typo of a core key in dsh.yml is said as one, not as a plugin's section; a -c
file that is not there is named whole, with how -c is resolved (review rev-cli,
findings 6 and 7)."""

from __future__ import annotations

from pathlib import Path

from cli_support import dsh


def test_a_typo_of_a_core_key_leads_with_unknown_key(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "dsh.yml").write_text("modle: fast\n")
    done = dsh("run", "hi", env=cli_env, cwd=tmp_path)
    assert done.returncode == 2
    assert "1:1: modle: unknown key; did you mean 'model'? (" in done.stderr, done.stderr
    checked = dsh("config", "check", env=cli_env, cwd=tmp_path)
    assert "modle: unknown key; did you mean 'model'?" in checked.stderr


def test_a_missing_c_file_is_named_whole(cli_env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "perm").mkdir()
    (tmp_path / "perm" / "dsh.yml").write_text("")
    (tmp_path / "here").mkdir()
    here = tmp_path / "here"
    done = dsh("--cwd", "../perm", "-c", "dsh.yml", "models", env=cli_env, cwd=here)
    assert done.returncode == 2
    assert done.stderr == (
        f"dsh: error: dsh.yml: file not found (looked for {here / 'dsh.yml'}); "
        "-c is relative to the current directory, not to --cwd\n"
    )
    checked = dsh("--cwd", "../perm", "-c", "dsh.yml", "config", "check", env=cli_env, cwd=here)
    assert checked.returncode == 1
    assert f"(looked for {here / 'dsh.yml'}); -c is relative" in checked.stderr
    alone = dsh("-c", "dsh.yml", "models", env=cli_env, cwd=here)  # no --cwd: no word of it
    assert alone.stderr.endswith(f"file not found (looked for {here / 'dsh.yml'})\n")
