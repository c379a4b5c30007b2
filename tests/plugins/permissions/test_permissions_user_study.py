"""The user study of dsh-permissions (see tests/cli/test_permissions_study.py), in-process:
the edges of the two holes it found, through the real dispatcher (``judge``: the plugin
first, the core executor last, a front end that answers "deny").

- A value only the shell knows (``rm${IFS}-f${IFS}x``) cannot be checked against a
  tool's deny and ask patterns; ``allow: [bash]`` used to allow it anyway.
- A tool given a directory reads through the symlinks inside it; the directory was
  checked, not where its symlinks lead.
- A shell fed its commands on its input (``echo 'rm x' | sh``) ran what no rule saw.
- A deny rule naming a directory (``write(src/secrets/)``) matched the directory only.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.plugins("permissions")


@pytest.mark.parametrize(
    ("rules", "command", "expected"),
    [
        # behaviour 49: what cannot be checked against a deny or ask pattern is asked
        ({"allow": ["bash"], "deny": ["bash(rm *)"]}, "rm${IFS}-f${IFS}x", "ask"),
        ({"allow": ["bash"], "deny": ["bash(rm *)"]}, "r$'m' -f x", "ask"),
        ({"allow": ["bash"], "deny": ["bash(rm *)"]}, "/bin/r? -f x", "ask"),
        ({"allow": ["bash"], "ask": ["bash(git push*)"]}, "git${IFS}push", "ask"),
        # a deny rule that matches the text as written still denies outright
        ({"allow": ["bash"], "deny": ["bash(rm *)"]}, "rm -rf $HOME", "deny"),
        # with no pattern to miss, allowing every call still allows it
        ({"allow": ["bash"]}, "echo $HOME", "allow"),
        ({"allow": ["bash"], "deny": ["bash"]}, "echo $HOME", "deny"),
        # a rule of another tool is not one bash's value could slip past
        ({"allow": ["bash"], "deny": ["read(.env)"]}, "echo $HOME", "allow"),
        ({"allow": ["bash"], "deny": ["bash(rm *)"]}, "echo hello", "allow"),
    ],
)
async def test_b49_a_value_only_the_shell_knows_is_not_allowed_past_a_pattern(
    judge, rules, command, expected
):
    judged = await judge(rules, "bash", {"command": command})
    assert judged.decision == expected, judged.event["reason"]
    if expected == "ask":
        assert "so it cannot be checked against the rule" in judged.event["asked"]
        assert judged.requests[0].remember == ()  # never remembered by "always"


@pytest.mark.parametrize(
    ("command", "named"),
    [
        ("echo $HOME", None),
        ("echo `id`", None),
        ("rm${IFS}-f${IFS}x", "deny: bash(rm *)"),
        ("/bin/r? -f x", "deny: bash(rm *)"),
        ("git${IFS}push", "ask: bash(git push*)"),
    ],
)
async def test_the_reason_names_only_a_rule_the_unknown_value_could_become(judge, command, named):
    """``echo $HOME`` was said to be asked about because it "cannot be checked against
    the rule 'deny: bash(rm *)'", a rule it could never match (session-29 journey)."""
    rules = {"allow": ["bash(echo *)"], "deny": ["bash(rm *)"], "ask": ["bash(git push*)"]}
    judged = await judge(rules, "bash", {"command": command})
    assert judged.decision == "ask", judged.event["reason"]
    asked = judged.event["asked"]
    if named is None:
        assert "so no rule can allow it" in asked
        assert "the rule" not in asked
    else:
        assert f"so it cannot be checked against the rule '{named}'" in asked


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        ("echo 'safe; rm -rf build'", "echo 'safe; rm -rf build'"),
        ('touch "a b" < "in put"', "touch 'a b' < 'in put'"),
        ("touch x$'y' \"$HOME\"/z *.py", "touch x$'y' \"$HOME\"/z *.py"),
        ("sudo touch 'a;b'", "touch 'a;b'"),
    ],
)
async def test_a_command_is_shown_quoted_as_it_runs(judge, command, shown):
    """``echo 'safe; rm -rf build'`` was shown to the person approving it (and in the
    "always" scope) as ``echo safe; rm -rf build`` (session-29 journey)."""
    judged = await judge({}, "bash", {"command": command})
    assert judged.decision == "ask", judged.event["reason"]
    quote = '"' if "'" in shown else "'"
    assert f"the command {quote}{shown}{quote}" in judged.event["asked"]
    assert ("command", shown) in judged.requests[0].subjects


async def test_b49_a_symlink_inside_a_directory_is_checked_where_it_leads(judge, layout):
    # layout: src/escape -> ../outside (a directory), innocent.txt -> .env
    judged = await judge({"deny": [f"read({layout.outside}/**)"]}, "read", {"path": "src"})
    assert judged.decision == "deny"
    assert f"points to {layout.outside}" in judged.event["reason"]
    assert "name a narrower path" in judged.event["reason"]


async def test_b49_an_ask_rule_sees_through_a_symlink_inside_a_directory_too(judge, layout):
    (layout.ws / "src" / "config" / "env").symlink_to(layout.ws / ".env")
    judged = await judge({"ask": ["read(.env)"]}, "read", {"path": "src"})
    assert judged.decision == "ask"
    assert f"points to {layout.ws}/.env" in judged.event["asked"]


async def test_a_directory_whose_symlinks_lead_nowhere_denied_runs(judge, layout):
    judged = await judge({"deny": ["read(/etc/shadow)"]}, "read", {"path": "src"})
    assert judged.decision == "allow"


async def test_a_directory_too_large_to_check_for_symlinks_is_taken_as_covered(
    judge, layout, monkeypatch
):
    import dsh_permissions._links as links

    monkeypatch.setattr(links, "MAX_ENTRIES", 2)
    judged = await judge({"deny": ["read(/etc/shadow)"]}, "read", {"path": "src"})
    assert judged.decision == "deny"
    assert "more than 2 entries, too many to check for symlinks" in judged.event["reason"]
    # with no deny or ask pattern for the tool, nothing is walked and nothing is refused
    judged = await judge({"deny": ["write(/etc/**)"]}, "read", {"path": "src"})
    assert judged.decision == "allow"


@pytest.mark.parametrize(
    ("rules", "tool", "arguments"),
    [
        ({"deny": ["read(/etc/shadow)"]}, "read", {"path": "{outside}"}),
        # the files a command reads are checked against the read tool's rules
        (
            {"allow": ["bash"], "deny": ["read(/etc/shadow)"]},
            "bash",
            {"command": "cp -r {outside} x"},
        ),
    ],
)
async def test_b49_a_directory_too_slow_to_check_for_symlinks_is_taken_as_covered(
    judge, layout, monkeypatch, rules, tool, arguments
):
    import itertools

    import dsh_permissions._links as links

    for i in range(links.CHECK_EVERY):
        (layout.outside / f"f{i}").touch()
    # on time at the start and before listing the directory, then past the deadline
    ticks = itertools.chain([0.0, 0.0], itertools.repeat(1e6))
    monkeypatch.setattr(links, "monotonic", lambda: next(ticks))
    judged = await judge(rules, tool, arguments)
    assert judged.decision == "deny"
    assert (
        f"(the directory cannot be checked: looking for symlinks in {layout.outside} took "
        f"too long: stopped after {links.MAX_SECONDS:g} seconds and {links.CHECK_EVERY} "
        "entries; name a narrower path the rule does not cover)" in judged.event["reason"]
    ), judged.event["reason"]


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("echo 'rm -f x' | sh", "ask"),
        ("sudo bash", "ask"),  # right behind a wrapper: still the command
        ("bash -e", "ask"),
        ("zsh -is", "ask"),
        # a script file is a documented limit; a shell's name as a later word is no shell
        ("bash scripts/build.sh", "allow"),
        ("sudo apt-get install zsh", "allow"),
        ("bash -c 'echo hi'", "allow"),
        ("echo sh", "allow"),
    ],
)
async def test_b49_a_shell_reading_its_input_cannot_be_allowed_by_allow_all(
    judge, command, expected
):
    judged = await judge({"allow": ["bash"]}, "bash", {"command": command})
    assert judged.decision == expected, judged.event["reason"]


@pytest.mark.parametrize(
    ("rules", "tool", "path", "expected"),
    [
        ({"deny": ["write(src/secrets/)"]}, "write", "src/secrets/k", "deny"),
        ({"deny": ["write(src/secrets)"]}, "write", "src/secrets/new/k", "deny"),
        ({"deny": ["write(src/secrets)"]}, "write", "src/secrets", "deny"),
        ({"ask": ["read(src/config)"]}, "read", "src/config/app.toml", "ask"),
        ({"deny": ["read(/etc)"]}, "read", "/etc/hostname", "deny"),
        ({"deny": ["write(*.lock)"]}, "write", "uv.lock", "deny"),
        # not what merely starts like it
        ({"deny": ["write(src/secrets)"]}, "write", "src/secrets2", "ask"),
        # an allow rule names what it names: it never grows by a guess
        ({"allow": ["write(src/)"]}, "write", "src/a.py", "ask"),
        ({"allow": ["write(src/**)"]}, "write", "src/a.py", "allow"),
    ],
)
async def test_b47_a_deny_or_ask_path_rule_covers_what_is_below_it(
    judge, rules, tool, path, expected
):
    judged = await judge(rules, tool, {"path": path})
    assert judged.decision == expected, judged.event["reason"]


@pytest.mark.parametrize(("rules", "said"), [({"allow": ["bash(git status)"]}, True), ({}, False)])
async def test_plan_mode_says_it_sets_allow_rules_aside(judge, rules, said):
    """An allowed ``git status`` denied in plan mode read as a broken rule (session-29
    journey): the reason says that allow rules do not apply in plan mode."""
    judged = await judge(rules, "bash", {"command": "git status"}, mode="plan")
    assert judged.decision == "deny"
    assert ("(allow rules do not apply in plan mode)" in judged.event["reason"]) is said
