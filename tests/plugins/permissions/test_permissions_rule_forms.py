"""Rules written in a form that could never match stop the harness, saying where and
why: a command pattern holding a shell operator (``bash(cd / && rm *)``: each part of a
line is matched on its own) and a backslash in a path pattern (``read(\\.env)``: no
escape). In an allow rule the first is only warned about (one that never matches asks,
which is safe). Claude Code's prefix form (``Bash(rm:*)``, which dsh reads as any
pattern: it matches only ``rm:x``) is refused in a deny or ask rule, saying to write
``bash(rm*)``, and warned about in an allow rule.
Brace alternatives in a path pattern (``read({.env,.envrc})``) are expanded."""

from __future__ import annotations

import logging

import pytest

import dsh_permissions
from dsh import HookError
from dsh.testing import ScriptedModel, scripted_harness

pytestmark = pytest.mark.plugins("permissions")


async def _start(rule: str, action: str = "deny") -> None:
    async with scripted_harness(
        ScriptedModel([]),
        plugins=[("permissions", dsh_permissions)],
        load_entry_points=False,
        config_text=f"permissions:\n  {action}: ['{rule}']\n",
    ):
        pass


async def _refusal(rule: str, action: str) -> str:
    with pytest.raises(HookError) as caught:
        await _start(rule, action)
    said = caught.value.for_user()
    where = 9 if action == "ask" else 10 if action == "deny" else 11
    assert said.startswith(f"<string>:2:{where}: permissions.{action}[0]: rule {rule!r} "), said
    return said


async def _warning(rule: str, action: str, caplog: pytest.LogCaptureFixture) -> str:
    with caplog.at_level(logging.WARNING, logger="dsh_permissions"):
        await _start(rule, action)
    (warning,) = [r.getMessage() for r in caplog.records if r.name == "dsh_permissions"]
    where = 9 if action == "ask" else 10 if action == "deny" else 11
    assert warning.startswith(f"warning: <string>:2:{where}: permissions.{action}[0]: "), warning
    return warning


PREFIX_FORMS = [
    ("Bash(rm:*)", "bash(rm*)"),
    ("Bash(git push:*)", "bash(git push*)"),
    ("bash(npm run deploy:*)", "bash(npm run deploy*)"),
    ("bash(docker run ubuntu:*)", "bash(docker run ubuntu*)"),
]


@pytest.mark.parametrize("action", ["deny", "ask"])
@pytest.mark.parametrize(("rule", "meant"), PREFIX_FORMS)
async def test_claude_code_prefix_form_is_refused_in_deny_and_ask(rule, meant, action):
    said = await _refusal(rule, action)
    assert "not Claude Code's prefix form here" in said
    assert f"did you mean {meant!r}?" in said


@pytest.mark.parametrize(("rule", "meant"), PREFIX_FORMS)
async def test_claude_code_prefix_form_is_only_warned_about_in_allow(rule, meant, caplog):
    said = await _warning(rule, "allow", caplog)
    assert "not Claude Code's prefix form here" in said
    assert f"did you mean {meant!r}?" in said


@pytest.mark.parametrize(
    ("rule", "command"),
    [
        ("bash(rm*)", "rm -rf src"),
        ("bash(git push*)", "git push origin main"),
        ("bash(npm run deploy*)", "npm run deploy:prod"),
        ("bash(npm run deploy*)", "npm run deploy x"),
        ("bash(npm run deploy:**)", "npm run deploy:prod"),
        ("bash(docker run ubuntu:**)", "docker run ubuntu:22.04"),
    ],
)
async def test_the_suggested_prefix_forms_deny_what_they_say(judge, rule, command):
    await _start(rule)  # accepted
    judged = await judge({"deny": [rule], "allow": ["bash"]}, "bash", {"command": command})
    assert judged.decision == "deny", judged.event["reason"]


async def test_find_exec_backslash_semicolon_is_refused_saying_to_drop_the_backslash():
    said = await _refusal("bash(find * -exec rm {} \\;)", "deny")
    assert "find's ';' without the backslash" in said
    assert "bash(find * -exec rm {} ;)" in said


@pytest.mark.parametrize("action", ["deny", "ask"])
@pytest.mark.parametrize(
    ("rule", "operator"),
    [
        ("bash(cd / && rm *)", "&&"),
        ("bash(true || rm *)", "||"),
        ("bash(cd /; rm *)", ";"),
        ("bash(cat * | sh)", "|"),
        ("bash(echo * > /etc/*)", ">"),
        ("bash(cat < .env)", None),
        ("bash(>> secrets/*)", ">>"),
        ("bash(rm * 2>/dev/null)", ">"),
        ("bash(cd /;rm *)", ";"),
        ("bash(git add *;git push *)", ";"),
        ("bash(a;b)", ";"),
        ("bash(make&&rm *)", "&&"),
        ("bash(true||rm *)", "||"),
        ("bash(rm *&&make)", "&&"),
    ],
)
async def test_a_shell_operator_in_a_command_pattern_is_refused(rule, operator, action):
    if operator is None:  # an input redirection stays in its command's text
        await _start(rule, action)
        return
    said = await _refusal(rule, action)
    assert f"holds the shell operator {operator!r}" in said
    assert "each part of a line is matched on its own" in said
    if ">" in operator:
        assert "bash(> path)" in said


@pytest.mark.parametrize(
    "rule",
    [
        "bash(> /etc/*)", "bash(> secrets/*)", "bash(echo a:b *)", "bash(scp * host:*)",
        "bash(grep a|b *)", "bash(find * -exec rm {} ;)", "bash(cat <<< *)",
        "read(src/{a}/**)", "bash(echo {a,b})", "bash(sh -c *;*)",
        "bash(psql * -c *;*)", "bash(sh -c *&&*)", "bash(sh -c *||*)",
    ],
)  # fmt: skip
async def test_legitimate_patterns_are_accepted(rule):
    await _start(rule.replace("'", "''"))


@pytest.mark.parametrize(
    "rule",
    [
        "bash(cd src && make)", "bash(true || rm *)", "bash(cd src; make)",
        "bash(cd src;make)", "bash(cd src&&make)", "bash(true||make)",
    ],
)  # fmt: skip
async def test_in_an_allow_rule_it_is_only_warned_about(rule, caplog):
    with caplog.at_level(logging.WARNING, logger="dsh_permissions"):
        await _start(rule, "allow")
    (warning,) = [r.getMessage() for r in caplog.records if r.name == "dsh_permissions"]
    assert warning.startswith(f"warning: <string>:2:11: permissions.allow[0]: rule {rule!r} ")
    assert "it would match no command; " in warning


@pytest.mark.parametrize("action", ["deny", "ask", "allow"])
@pytest.mark.parametrize("rule", ["read(\\.env)", "read(src/\\*.py)"])
async def test_a_backslash_in_a_path_pattern_is_refused(rule, action):
    said = await _refusal(rule.replace("\\", "\\"), action)
    assert "has a bad path pattern" in said
    assert "a backslash escapes nothing in a path pattern" in said


@pytest.mark.parametrize(
    ("rule", "path", "denied"),
    [
        ("read({.env,.envrc})", ".env", True),
        ("read({.env,.envrc})", ".envrc", True),
        ("read({.env,.envrc})", "env", False),
        ("read(**/*.{pem,key})", "src/a.key", True),
        ("read(**/*.{pem,key})", "a.pem", True),
        ("read(**/*.{pem,key})", "a.pub", False),
        ("read(src/{a,b{c,d}}/x)", "src/bd/x", True),
        ("read(src/{a}/x)", "src/{a}/x", True),
    ],
)
async def test_brace_alternatives_in_a_path_pattern_are_expanded(judge, rule, path, denied):
    judged = await judge({"deny": [rule]}, "read", {"path": path}, mode="bypass")
    assert (judged.decision == "deny") is denied, judged.event["reason"]


async def test_too_many_brace_alternatives_are_refused():
    rule = "read(" + "{a,b}" * 8 + ")"
    said = await _refusal(rule, "deny")
    assert "more than 64 alternatives" in said


def test_a_rule_given_in_code_is_checked_by_its_list():
    """With the harness in the validation context (an agent's options given in code),
    a deny rule in such a form is refused and an allow rule let be (warned at start
    for the config's)."""
    from types import SimpleNamespace

    from pydantic import ValidationError

    from dsh.builtin_tools import builtin_tools
    from dsh.tools import ToolRegistry
    from dsh_permissions._settings import PermissionSettings

    registry = ToolRegistry()
    for each in builtin_tools():
        registry.add("core", each)
    context = {"harness": SimpleNamespace(tools=registry)}
    allowed = PermissionSettings.model_validate({"allow": ["bash(a && b)"]}, context=context)
    assert allowed.allow == ("bash(a && b)",)
    with pytest.raises(ValidationError, match="holds the shell operator '&&'"):
        PermissionSettings.model_validate({"deny": ["bash(a && b)"]}, context=context)
    with pytest.raises(ValidationError, match=r"did you mean 'bash\(rm\*\)'"):
        PermissionSettings.model_validate({"deny": ["Bash(rm:*)"]}, context=context)
    prefix = PermissionSettings.model_validate({"allow": ["Bash(rm:*)"]}, context=context)
    assert prefix.allow == ("Bash(rm:*)",)


@pytest.mark.parametrize(
    ("rule", "made"),
    [
        ("read({,.env})", "''"), ("read({,src}/.env)", "'/.env'"),
        ("read({,/etc}/x)", "'/x'"), ("read({a,}{,/b})", "''"),
    ],
)  # fmt: skip
async def test_an_empty_brace_alternative_making_it_absolute_is_refused(rule, made):
    said = await _refusal(rule, "deny")
    assert f"a brace alternative makes it {made}" in said


@pytest.mark.parametrize(
    ("rule", "path", "denied"),
    [
        ("read(key{1..3}.pem)", "key2.pem", True),
        ("read(key{1..3}.pem)", "key4.pem", False),
        ("read(key{1..3}.pem)", "key{1..3}.pem", False),
        ("read({a..c}.txt)", "b.txt", True),
        ("read(k{01..10..3})", "k07", True),
        ("read({,src/}.env)", "src/.env", True),
        ("read({,src/}.env)", ".env", True),
        ("read({a,b,c}" + "{a,a}" * 7 + ")", "caaaaaaa", True),
    ],
)
async def test_sequences_and_duplicates_expand_as_in_bash(judge, rule, path, denied):
    judged = await judge({"deny": [rule]}, "read", {"path": path}, mode="bypass")
    assert (judged.decision == "deny") is denied, judged.event["reason"]


@pytest.mark.parametrize(
    ("pattern", "said"),
    [
        ("{a,a}" * 2000, "more than 64 '{'"),
        ("{" * 20000, "more than 64 '{'"),
        ("x{1..100}", "more than 64 alternatives"),
        ("x{1..99999999999}", "more than 64 alternatives"),
    ],
)
def test_a_pattern_with_too_many_braces_is_refused_before_expanding(pattern, said):
    from dsh_permissions._paths import pattern_problem

    assert said in (pattern_problem(pattern) or "")


@pytest.mark.parametrize(
    ("rule", "path"),
    [
        ("read({/etc/shadow,/etc/passwd})", "/etc/passwd"),
        ("read({/etc,/root}/**)", "/root/.bashrc"),
        ("read({.env,/etc/passwd})", "/etc/passwd"),
        ("read({.env,/etc/passwd})", ".env"),
    ],
)
async def test_brace_alternatives_written_absolute_in_full_are_kept(judge, rule, path):
    await _start(rule)  # accepted: no empty alternative makes it absolute
    judged = await judge({"deny": [rule]}, "read", {"path": path}, mode="bypass")
    assert judged.decision == "deny", judged.event["reason"]


BACKSLASHED = ["bash(rm \\*)", "bash(echo \\$HOME)", "bash(rm a\\ b)", "bash(grep -E a\\.b *)"]


@pytest.mark.parametrize("action", ["deny", "ask"])
@pytest.mark.parametrize("rule", BACKSLASHED)
async def test_a_backslash_in_a_deny_or_ask_command_pattern_is_refused(rule, action):
    """Review of session 43, finding 3: ``bash(rm \\*)`` matched no ``rm *`` (a command's
    text is as the shell runs it, re-quoted: ``rm '*'``; deny rules also see it
    unquoted, ``rm *``), and was accepted silently."""
    said = await _refusal(rule, action)
    assert "a backslash escapes nothing in a command pattern" in said


@pytest.mark.parametrize("rule", BACKSLASHED)
async def test_a_backslash_in_an_allow_command_pattern_is_warned_about(rule, caplog):
    said = await _warning(rule, "allow", caplog)
    assert "a backslash escapes nothing in a command pattern" in said
    # re-review of session 43, finding 3: it does match a backslash a word holds
    assert "taken away" not in said and "only a backslash a word holds" in said


async def test_the_refusal_leads_with_a_rule_that_works(judge):
    """Re-review of session 43, finding 3: the refusal of ``bash(printf *a\nb*)`` first
    said to write it without the backslash, ``bash(printf *anb*)``, which matches no
    ``printf 'a\nb'``: it leads with ``*`` in the backslash's place, which does."""
    said = await _refusal("bash(printf *a\\nb*)", "deny")
    assert "; for a backslash a word holds write '*' in its place (bash(printf *a*nb*))" in said
    rules = {"deny": ["bash(printf *a*nb*)"], "allow": ["bash"]}
    judged = await judge(rules, "bash", {"command": "printf 'a\\nb'"})
    assert judged.decision == "deny", judged.event["reason"]
    dead = await judge(
        {"deny": ["bash(printf *anb*)"], "allow": ["bash"]}, "bash", {"command": "printf 'a\\nb'"}
    )
    assert dead.decision == "allow"  # what the old advice wrote


async def test_an_allow_rule_with_a_backslash_matches_one_a_word_holds(judge):
    judged = await judge(
        {"allow": ["bash(grep -E *\\.py)"]}, "bash", {"command": "grep -E '\\.py'"}
    )
    assert judged.decision == "allow", judged.event["reason"]


@pytest.mark.parametrize("command", ['rm "*"', "rm '*'", "rm \\*"])
async def test_a_command_is_matched_unquoted_and_shown_quoted_again(judge, command):
    """As docs/permissions.md says (review of session 43, finding 5, which found the
    docs said only the first half): rules match the words with quotes and escaping
    backslashes removed; a person is shown them quoted again as the shell takes them."""
    allowed = await judge({"allow": ["bash(rm *)"]}, "bash", {"command": command})
    assert allowed.decision == "allow"
    assert "the command \"rm '*'\"" in allowed.event["reason"], allowed.event["reason"]
    quoted = await judge({"allow": ["bash(rm '*')"]}, "bash", {"command": command})
    assert quoted.decision == "ask"
    assert quoted.requests[0].subjects == (("command", "rm '*'"),)
