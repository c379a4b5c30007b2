"""A differential corpus of commands after a change of directory (behaviour 49: a rule
must not be smuggled past by another spelling of the same command).

Three places formed the file a relative word names in a directory the shell may be in
(``_moved`` for a command's text, ``_command_text`` for an output redirection,
``_reads`` for the files a command reads), each skipping slightly different words;
they now share ``_located.located``. Before that change, 3000 generated commands
(``cd``, ``pushd``, ``env -C``, ``sudo -D``, subshells, ``sh -c``, pipes,
redirections, ``~``, absolute, relative, ``..``, symlinked directories, quoted and
dynamic words) were decided under each rule set below and every decision recorded;
after it, each was the same or stricter. These are a few hundred of them
(chdir_corpus.jsonl), with the decision written out as recorded (``ask``: the front
end was asked); one was recorded ``allow`` and is ``ask`` since a lone ``--`` no longer
hides a command from deny and ask rules (``ask-cat``, ``cd secrets & env -C door cat --
a.py > ~/out``: see test_permissions_end_of_options), and three are stricter since
``wc`` reads the files it is given (permrev3 F7: ``wc --file=key`` in ``secrets`` is
denied by ``deny: read(secrets/key)``, ``wc http://x/key`` after ``cd /etc`` names a
file there that is not known: asked). The workspace
has the symlinks ``door -> secrets``, ``secrets/back -> src``, ``src/deep ->
secrets/sub`` and ``src/up -> ..``, and ``$HOME`` is ``ws/home`` (which holds
``secrets/key``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from permissions_util import Layout

pytestmark = pytest.mark.plugins("permissions")

RULES: dict[str, dict[str, Any]] = {
    "deny-cat": {"allow": ["bash"], "deny": ["bash(cat secrets/*)"]},
    "deny-read": {"allow": ["bash"], "deny": ["read(secrets/**)"]},
    "ask-cat": {"allow": ["bash"], "ask": ["bash(cat secrets/*)"], "deny": ["bash(rm *)"]},
    "allow-cat-ask-read": {
        "allow": ["bash(cat *)", "bash(echo *)", "bash(head *)", "bash(grep *)", "bash(cd *)"],
        "ask": ["read(secrets/**)"],
    },
    # (it held bash(>> secrets/*) too, which matched nothing: every output redirection
    # is matched as > path, and such a rule is now refused, test_permissions_rule_forms)
    "deny-redirect": {"allow": ["bash"], "deny": ["bash(> secrets/*)"]},
    "deny-key": {"allow": ["bash(*)"], "deny": ["read(secrets/key)", "bash(* secrets/key*)"]},
    "allow-only": {
        "allow": ["bash(cat *)", "bash(ls *)", "bash(cd *)", "bash(echo *)", "read(**)"]
    },
    "deny-cp-ask-home": {
        "allow": ["bash", "read(**)"],
        "deny": ["bash(cp * secrets/*)", "bash(tar *secrets*)"],
        "ask": ["read(~/secrets/**)", "bash(head secrets/*)"],
    },
    "deny-env": {"allow": ["bash"], "deny": ["read(**/.env)", "bash(cat *.env)"]},
}

#: (rule set, command, decision): one JSON array a line
CASES = [
    tuple(json.loads(line))
    for line in (Path(__file__).parent / "chdir_corpus.jsonl").read_text().splitlines()
]


@pytest.fixture
def layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Layout:
    from permissions_util import Layout

    root = tmp_path.resolve()
    ws, outside = root / "ws", root / "outside"
    for directory in ("secrets/sub", "secrets/k dir", "src/lib", "home/secrets"):
        (ws / directory).mkdir(parents=True)
    outside.mkdir()
    for name in ("secrets/key", "secrets/.env", "src/a.py", ".env", "home/secrets/key"):
        (ws / name).write_text("x\n")
    (outside / "secret.txt").write_text("x\n")
    (ws / "door").symlink_to(ws / "secrets")
    (ws / "secrets" / "back").symlink_to(ws / "src")
    (ws / "src" / "deep").symlink_to(ws / "secrets" / "sub")
    (ws / "link_out").symlink_to(outside)
    (ws / "src" / "up").symlink_to("..")
    monkeypatch.setenv("HOME", str(ws / "home"))
    return Layout(root, ws, outside)


@pytest.mark.parametrize(("rules", "command", "expected"), CASES)
async def test_b49_commands_after_a_change_of_directory_keep_their_decision(
    judge, layout, rules, command, expected
):
    judged = await judge(RULES[rules], "bash", {"command": command})
    assert judged.decision == expected, judged.event["reason"]


@pytest.mark.parametrize(
    "command",
    ["cd secrets && find . -exec cat {} \\;", "cd secrets; sudo cat {}", "env -C door grep x {}"],
)
async def test_b49_a_placeholder_after_a_cd_is_read_in_the_directory_too(judge, command):
    """Was asked about, not denied: ``_reads._there`` skipped a word holding ``{}``
    (the other two readers of a word in a held directory did not); the shared
    ``_located.located`` reads it as ``secrets/{}``, which the rule covers."""
    judged = await judge(RULES["deny-read"], "bash", {"command": command})
    assert judged.decision == "deny", judged.event["reason"]
