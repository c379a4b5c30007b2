"""Attacks on what docs/permissions.md claims a ``read`` deny or ask rule covers ("Commands
that read files"): wrappers, URLs, attached option values, other directories,
/proc/self, and what ``watch`` runs. Behaviour 49: a rule must not be smuggled past by
another spelling of the same file or command. Each row leaked (the call ran unasked)
before the fix named in its test's docstring. Calls go through the real dispatcher
(conftest ``judge``; the layout has ``.env``, ``innocent.txt -> .env``, ``src/config``,
``.git``).
"""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from permissions_attack_s17_support import ALLOW_ALL

pytestmark = pytest.mark.plugins("permissions")

ALLOW_ENV = {"allow": ["bash(env *)", "bash(cat *)"], "deny": ["read(.env)"]}


BYPASS = {"deny": ["read(.env)"]}


@pytest.mark.parametrize("rules", [ALLOW_ALL, ALLOW_ENV], ids=["allow-bash", "allow-env"])
@pytest.mark.parametrize(
    "command",
    [
        "env -S 'cat .env'",
        "env -S'cat .env'",
        "env --split-string='cat .env'",
        "env --split='cat .env'",  # getopt takes a shortened long option
        "env --spl 'cat .env'",
        "env -iS 'cat .env'",
        "env -S 'A=1 cat .env'",
    ],
)
async def test_b49_a_read_deny_rule_covers_what_env_s_runs(judge, rules, command):
    """Leaked: env -S's string was one word, whose name (``cat .env``) is no reading
    program. It is now split as env splits it (_commands._env_split)."""
    judged = await judge(rules, "bash", {"command": command})
    assert judged.decision == "deny", judged.event["reason"]
    assert judged.event["rule"] == "deny: read(.env)"


@pytest.mark.parametrize(
    "command",
    [
        "env -S 'sh -c \"cat .env\"'",
        # xargs -a FILE reads FILE (the arguments it passes on) (_reads._arg_files)
        "xargs -a .env echo",
        "xargs -a.env echo",
        "xargs -0a .env echo",
        "xargs --arg-file=.env echo",
        "xargs --arg=.env echo",
        "xargs -d x -a .env echo",
        "sudo xargs -a .env echo",
        # watch runs its words joined, through sh -c
        "watch 'cat .env'",
        "watch -n 1 'echo ok; cat .env'",
    ],
)
async def test_b49_a_read_deny_rule_covers_what_a_wrapper_reads(judge, command):
    """Leaked under ``allow: [bash]``: xargs's -a file was not looked at, and watch's
    joined words were one word."""
    judged = await judge(ALLOW_ALL, "bash", {"command": command})
    assert judged.decision == "deny", judged.event["reason"]
    assert judged.event["rule"] == "deny: read(.env)"


@pytest.mark.parametrize(
    "command",
    [
        # a listed program told to read a file:// URL
        "curl file://{ws}/.env",
        "curl -o- FILE://{ws}/.env",
        "curl file://localhost{ws}/.env",
        # a value given in the same word as its short option
        "tar -cvf - -T.env",
        "curl -K.env http://example.invalid",
        "wget -i.env",
    ],
)
async def test_b49_a_read_deny_rule_covers_urls_and_attached_option_values(judge, layout, command):
    """Leaked: ``file://`` URLs were taken for relative paths (a directory ``file:``),
    and only ``f`` in a cluster gave its attached value (``grep -f.env``), not
    ``-T.env``, ``-K.env``, ``-i.env`` (_reads._operands, _reads._file)."""
    judged = await judge(ALLOW_ALL, "bash", {"command": layout.fill(command)})
    assert judged.decision == "deny", judged.event["reason"]
    assert judged.event["rule"] == "deny: read(.env)"


async def test_a_file_url_naming_another_host_is_asked_about(judge):
    judged = await judge(ALLOW_ALL, "bash", {"command": "curl file://otherhost/x/.env"})
    assert judged.decision == "ask"
    assert "another host" in judged.event["asked"]


@pytest.mark.parametrize(
    "command",
    [
        "env -C src cat ../.env",
        "env --chdir=src cat ../.env",
        "env --ch=src cat ../.env",
        "env -iC src cat ../.env",
        "sudo -D src cat ../.env",
        "sudo --chdir=src cat ../.env",
    ],
)
@pytest.mark.parametrize("mode", ["default", "bypass"])
async def test_b49_a_relative_file_read_in_a_followed_directory_is_denied(judge, command, mode):
    """Leaked: ``../.env`` behind ``env -C src`` (``sudo -D``) is the workspace's
    ``.env``, but was resolved from the workspace root (a file outside it). The
    directory is now followed and the name also read there (``_moved``,
    ``_reads._there``): the read rule denies it (it was asked about before that)."""
    rules = ALLOW_ALL if mode == "default" else BYPASS
    judged = await judge(rules, "bash", {"command": command}, mode=mode)
    assert judged.decision == "deny", judged.event["reason"]
    assert judged.event["rule"] == "deny: read(.env)", judged.event["reason"]


@pytest.mark.parametrize(
    "command",
    ["find src/config -maxdepth 0 -execdir cat ../.env ;", "find src -execdir cat ../.env +"],
)
@pytest.mark.parametrize("mode", ["default", "bypass"])
async def test_b49_a_relative_file_read_in_another_directory_is_not_allowed(judge, command, mode):
    """Leaked: ``../.env`` behind ``find -execdir`` is a file of the directory of each
    file found, but was resolved from the workspace root (a file outside it). Relative
    names there are unknown, as after ``cd``: asked about (bypass: denied)."""
    rules = ALLOW_ALL if mode == "default" else BYPASS
    judged = await judge(rules, "bash", {"command": command}, mode=mode)
    assert judged.decision == ("ask" if mode == "default" else "deny"), judged.event["reason"]
    why = judged.event["asked"] if mode == "default" else judged.event["reason"]
    assert "directory, so '../.env' may name another file" in why, why


@pytest.mark.parametrize(
    "command",
    [
        "cat /proc/self/cwd/.env",
        "cat /proc/thread-self/cwd/.env",
        "cat /dev/fd/../cwd/.env",
        "grep -r TOKEN /proc/self/cwd",
    ],
)
async def test_b49_a_file_named_through_proc_self_is_not_resolved_by_the_checker(
    judge, layout, monkeypatch, command
):
    """Leaked: /proc/self/cwd was resolved in the checking process (whose directory is
    not the workspace), while the command's own /proc/self/cwd is the workspace."""
    monkeypatch.chdir(layout.outside)
    judged = await judge(ALLOW_ALL, "bash", {"command": command})
    assert judged.decision == "ask", judged.event["reason"]
    assert "through /proc" in judged.event["asked"], judged.event["asked"]


async def test_b49_a_command_watch_runs_is_checked_against_deny_rules(judge):
    """Leaked: ``watch 'echo; rm -rf x'`` runs ``rm -rf x`` through sh -c; its text was
    one word that ``rm *`` does not match."""
    rules = {"allow": ["bash"], "deny": ["bash(rm *)"]}
    judged = await judge(rules, "bash", {"command": "watch -n 1 'echo ok; rm -rf build'"})
    assert judged.decision == "deny"
    assert judged.event["rule"] == "deny: bash(rm *)"


# -- generated: wrappers, separators and spellings around a read of .env -------------

_SPELLINGS = [
    ".env", "./.env", "'.env'", '".env"', "\\.env", ".e''nv", ".e\\nv", "src/../.env",
    "{ws}/.env", "innocent.txt", ".//.env", "src/config/../../.env",
]  # fmt: skip


_READERS = [
    "cat", "head -n 1", "tail -c 5", "grep -e x", "sed -n p", "awk 1", "base64", "xxd",
    "/bin/cat", "c'a't", "\\cat", "cp -t .", "dd if=", "cat --", "sort -k 1",
]  # fmt: skip


_WRAPPERS = [
    "sudo", "sudo -u root", "env", "env A=1", "timeout 5", "timeout -s KILL 5", "nice -n 5",
    "nohup", "command", "stdbuf -oL", "setsid", "busybox", "time", "exec", "ionice -c 3",
]  # fmt: skip


_CONTEXTS = [
    "{}", "echo ok; {}", "echo ok && {}", "false || {}", "({})", "echo $({})", "echo `{}`",
    "echo ok\n{}", "diff <({}) /dev/null", "{} | wc -c", "X=1 {}", "{} 2>&1", "! {}",
]  # fmt: skip


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    spelling=st.sampled_from(_SPELLINGS),
    reader=st.sampled_from(_READERS),
    wrappers=st.lists(st.sampled_from(_WRAPPERS), max_size=3),
    context=st.sampled_from(_CONTEXTS),
    shell=st.booleans(),
)
def test_b49_generated_reads_of_env_never_run_unasked(
    judge, layout, spelling, reader, wrappers, context, shell
):
    joined = "" if reader.endswith("=") else " "
    command = " ".join([*wrappers, f"{reader}{joined}{layout.fill(spelling)}"])
    if shell and "'" not in command:
        command = f"sh -c '{command}'"
    command = context.replace("{}", command)
    judged = asyncio.run(judge(ALLOW_ALL, "bash", {"command": command}))
    assert judged.decision != "allow", (command, judged.event["reason"])
