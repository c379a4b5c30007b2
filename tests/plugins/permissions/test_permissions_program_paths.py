"""A program given as a path keeps its path (permission review of session 32, B3).

``./pytest -q``, ``src/../pytest -q`` and ``{ws}/pytest -q`` were all matched as
``pytest -q``: ``allow: bash(pytest *)`` and an "always" answer given for the
program on ``PATH`` ran a file of the workspace the agent had written, the question
showed ``pytest -q``, and ``allow: bash(./gradlew test)`` matched nothing. A program
word with a ``/`` is now matched as ``./`` and its path from the workspace root
(``./gradlew``, ``./scripts/build.sh``), or its absolute path outside it
(``_command_text.program_text``); deny and ask rules also see it as before (its bare
name, and its path without ``./``). Rows go through the real dispatcher (conftest
``judge``); the turns run the real tools on real files.
"""

from __future__ import annotations

import pytest
from permissions_turns import bash, real_turn

from dsh_permissions import PermissionAnswer

pytestmark = pytest.mark.plugins("permissions")

PYTEST = {"allow": ["bash(pytest *)", "bash(timeout *)"]}
GRADLEW = {"allow": ["bash(./gradlew *)"]}
SCRIPT = {"allow": ["bash(./scripts/build.sh *)"]}
OUTSIDE = {"allow": ["bash({outside}/tool *)"]}
BARE_TOOL = {"allow": ["bash(tool *)"]}
PIP = {"allow": ["bash(.venv/bin/pip *)"]}
TEST_SH = {"allow": ["bash(scripts/test.sh*)"]}


@pytest.mark.parametrize(
    ("rules", "command", "decision"),
    [
        (PYTEST, "pytest -q", "allow"),
        # a file of the workspace is not the program on PATH
        (PYTEST, "./pytest -q", "ask"),
        (PYTEST, "src/../pytest -q", "ask"),
        (PYTEST, "{ws}/pytest -q", "ask"),
        (PYTEST, "timeout 5 ./pytest -q", "ask"),
        # a rule written as people write it matches, however the path is spelt
        (GRADLEW, "./gradlew test", "allow"),
        (GRADLEW, "src/../gradlew test", "allow"),
        (GRADLEW, "{ws}/gradlew test", "allow"),
        (GRADLEW, "gradlew test", "ask"),  # the program on PATH
        (SCRIPT, "./scripts/build.sh --release", "allow"),
        (SCRIPT, "scripts/build.sh --release", "allow"),
        (SCRIPT, "build.sh --release", "ask"),
        (OUTSIDE, "{outside}/tool x", "allow"),
        (BARE_TOOL, "{outside}/tool x", "ask"),
        (BARE_TOOL, "tool x", "allow"),
        # a rule's program word with a / is a path of the workspace, ./ or not
        (PIP, ".venv/bin/pip install -r r.txt", "allow"),
        (PIP, "./.venv/bin/pip install -r r.txt", "allow"),
        (PIP, "pip install -r r.txt", "ask"),
        (TEST_SH, "scripts/test.sh -q", "allow"),
        (TEST_SH, "./scripts/test.sh", "allow"),
        ({"allow": ["bash(gradlew *)"]}, "./gradlew test", "ask"),  # a bare name
    ],
)
async def test_b3_allow_rules_tell_a_program_path_from_a_bare_name(
    judge, layout, rules, command, decision
):
    rules = {key: [layout.fill(r) for r in value] for key, value in rules.items()}
    judged = await judge(rules, "bash", {"command": command})
    assert judged.decision == decision, judged.event["reason"]


@pytest.mark.parametrize(
    ("rule", "command"),
    [
        ("bash(scripts/deploy.sh *)", "./scripts/deploy.sh prod"),
        ("bash(scripts/deploy.sh *)", "scripts/deploy.sh prod"),
        ("bash(scripts/deploy.sh *)", "{ws}/scripts/deploy.sh prod"),
        ("bash(deploy.sh *)", "./scripts/deploy.sh prod"),
        ("bash(./gradlew publish*)", "src/../gradlew publish"),
        ("bash(gradlew publish*)", "./gradlew publish"),
        ("bash(rm *)", "./rm -rf src"),
        ("bash(cat src/*)", "timeout 5 cat ./src/a.py"),
    ],
)
async def test_b3_deny_rules_still_see_the_program_without_its_path(judge, rule, command):
    judged = await judge({"allow": ["bash(*)"], "deny": [rule]}, "bash", {"command": command})
    assert judged.decision == "deny", judged.event["reason"]


async def test_b3_an_allow_rule_for_a_program_does_not_run_the_agents_file(tmp_path):
    """accept-edits, ``allow: bash(pytest *)``: the agent writes ``pytest`` (unasked)
    and runs ``./pytest -q``, which was allowed by the rule and ran."""
    (tmp_path / "victim").mkdir()
    rules = {"mode": "accept-edits", "allow": ["bash(pytest *)", "bash(chmod *)"]}
    script = "#!/bin/sh\nrm -rf victim; echo ran > pwned.txt\n"
    write = ("write", {"path": "pytest", "content": script})
    turn = await real_turn(tmp_path, rules, [write, bash("chmod +x pytest; ./pytest -q")])
    assert [d["decision"] for d in turn.decisions] == ["allow", "deny"], turn.decisions
    assert turn.questions == [["./pytest -q"]]
    assert (tmp_path / "victim").is_dir()
    assert not (tmp_path / "pwned.txt").exists()


async def test_b3_an_always_answer_for_a_program_does_not_cover_a_workspace_file(tmp_path):
    """ "always" for ``echo hi`` (the program on PATH) also allowed ``./echo hi``, a
    file of the workspace: the two shared the remembered text ``echo hi``."""
    (tmp_path / "echo").write_text("#!/bin/sh\necho ran > ran.txt\n")
    (tmp_path / "echo").chmod(0o755)
    turn = await real_turn(
        tmp_path,
        {"mode": "default"},
        [bash("echo hi"), bash("./echo hi"), bash("echo hi")],
        answers=[PermissionAnswer.always()],
    )
    assert turn.questions == [["echo hi"], ["./echo hi"]]
    assert [d["decision"] for d in turn.decisions] == ["allow", "deny", "allow"]
    assert turn.results[0].startswith("hi") and turn.results[2].startswith("hi")
    assert not (tmp_path / "ran.txt").exists()
