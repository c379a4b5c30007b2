"""``cd ..`` and ``cd -`` go where the checker reads them (permission review of session
32, B5).

dsh started in a workspace entered through a symlink (``home/proj -> data/proj``) by a
shell that came from ``home``: the core's bash tool passed that shell's ``PWD`` and
``OLDPWD`` on, so bash's ``cd ..`` went to ``home`` and ``cd -`` too, while the checker
reads the line from the workspace's real directory (``cd ..`` is ``data``). With
``deny: bash(cat {home}/secret*)``, ``cd .. && cat secret.txt`` printed the secret. The
bash tool now runs commands with ``PWD`` the real directory and no ``OLDPWD``
(``dsh.builtin_tools._bash.command_environment``). A real turn with the real tool.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from permissions_turns import bash, real_turn

pytestmark = pytest.mark.plugins("permissions")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``home`` with ``secret.txt`` and ``proj -> ../data/proj``, entered as the user's
    shell does it: ``cd ~/proj`` from ``~``."""
    base = tmp_path.resolve()
    (base / "data" / "proj").mkdir(parents=True)
    home = base / "home"
    home.mkdir()
    (home / "secret.txt").write_text("HOME SECRET\n")
    (home / "proj").symlink_to(base / "data" / "proj")
    monkeypatch.chdir(home / "proj")
    monkeypatch.setenv("PWD", str(home / "proj"))
    monkeypatch.setenv("OLDPWD", str(home))
    return home


async def test_b5_cd_dot_dot_and_cd_dash_stay_where_the_checker_reads_them(home: Path) -> None:
    base = home.parent
    rules = {
        "allow": ["bash(cat *)", "bash(cd *)", "bash(pwd)"],
        "deny": [f"bash(cat {home}/secret*)"],
    }
    commands = [
        f"cat {home}/secret.txt",
        "cd .. && pwd && cat secret.txt",
        "cd - && cat secret.txt",
    ]
    turn = await real_turn(home / "proj", rules, [bash(c) for c in commands])
    assert [d["decision"] for d in turn.decisions] == ["deny", "allow", "allow"], turn.decisions
    assert "cd " + str(base / "data") in turn.decisions[1]["reason"]
    assert turn.results[1].startswith(f"{base / 'data'}\n"), turn.results[1]
    assert not any("HOME SECRET" in r for r in turn.results), turn.results
