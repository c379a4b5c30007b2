"""Attacks on what docs/permissions.md claims a ``read`` deny or ask rule covers
("Commands that read files"), on git's global options for deny and ask rules, and on
the files accept-edits keeps out ("Files that run code later"). Behaviour 49: a rule
must not be smuggled past by another spelling of the same file or command. Each row
leaked (the call ran unasked) before the fix named in its test's docstring. Calls go
through the real dispatcher (conftest ``judge``; the layout has ``.env``,
``innocent.txt -> .env``, ``src/config``, ``.git``).
"""

from __future__ import annotations

import asyncio
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh_permissions._commands import command_subjects
from dsh_permissions._rules import TextPattern

pytestmark = pytest.mark.plugins("permissions")

ALLOW_ALL = {"allow": ["bash"], "deny": ["read(.env)"]}
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
        "find src/config -maxdepth 0 -execdir cat ../.env ;",
        "find src -execdir cat ../.env +",
    ],
)
@pytest.mark.parametrize("mode", ["default", "bypass"])
async def test_b49_a_relative_file_read_in_another_directory_is_not_allowed(judge, command, mode):
    """Leaked: ``../.env`` behind ``env -C src`` (``sudo -D``, ``find -execdir``) is the
    workspace's ``.env``, but was resolved from the workspace root (a file outside it).
    A wrapper that changes the directory now makes relative names unknown, as ``cd``
    does: asked about (bypass: denied)."""
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


@pytest.mark.parametrize(
    "command",
    ["env -S'git -C . push'", "env --split-string='git -C . push'", "env --split='git push'"],
)
async def test_b49_git_push_in_an_env_split_string_is_asked_about(judge, command):
    """Leaked: only a separate ``-S`` word was split for git's global options."""
    rules = {"allow": ["bash"], "ask": ["bash(git push*)"]}
    judged = await judge(rules, "bash", {"command": command})
    assert judged.decision == "ask"
    assert judged.event["rule"] == "ask: bash(git push*)", judged.event["reason"]


async def test_b49_a_command_watch_runs_is_checked_against_deny_rules(judge):
    """Leaked: ``watch 'echo; rm -rf x'`` runs ``rm -rf x`` through sh -c; its text was
    one word that ``rm *`` does not match."""
    rules = {"allow": ["bash"], "deny": ["bash(rm *)"]}
    judged = await judge(rules, "bash", {"command": "watch -n 1 'echo ok; rm -rf build'"})
    assert judged.decision == "deny"
    assert judged.event["rule"] == "deny: bash(rm *)"


@pytest.mark.parametrize(
    "path",
    [
        ".g\u200cit/config",  # HFS+ leaves U+200C out of names
        ".git./config",  # NTFS drops trailing dots
        ".git /hooks/pre-commit",  # and spaces
        ".git::$INDEX_ALLOCATION/config",  # an NTFS stream of the directory
        "GIT~1/config",  # NTFS short name
        ".envrc.",
        "src/.ENVRC ",
        "\uff0egit/config",  # look-alike full-width dot
    ],
)
async def test_accept_edits_asks_about_names_a_file_system_folds_to_a_guarded_one(judge, path):
    """Leaked: only case was folded; a file system that folds names in other ways (as
    git itself guards against: is_hfs_dotgit, is_ntfs_dotgit) has one ``.git`` for
    these too. docs/permissions.md, "Files that run code later"."""
    judged = await judge({}, "write", {"path": path}, mode="accept-edits")
    assert judged.decision == "ask", judged.event["reason"]
    assert "accept-edits does not cover" in judged.event["asked"], judged.event["asked"]


async def test_accept_edits_still_allows_ordinary_names(judge):
    judged = await judge({}, "write", {"path": "src/git.py"}, mode="accept-edits")
    assert judged.decision == "allow", judged.event["reason"]


# -- commands that get more words at run time: xargs, find -exec {} ----------------------

PUSH_ASKED = {"allow": ["bash"], "ask": ["bash(git push*)"]}
PUSH_DENIED = {"allow": ["bash"], "deny": ["bash(git push*)"]}


@pytest.mark.parametrize(
    "command",
    [
        "echo push | xargs git",
        "echo push | xargs -I{} git {}",
        "echo push | xargs -I {} git {}",
        "echo push | xargs -i git {}",
        "echo push | xargs --replace git {}",
        "echo push | xargs -J % git %",  # BSD
        "echo sh | xargs -I{} git pu{}",
        "echo push | xargs -0 -r git",
        "echo push | xargs -n 1 -P 2 git",
        "echo push | xargs --max-args=1 git",
        "echo push | xargs -- git",
        "echo push | xargs /usr/bin/git",
        "echo push | xargs git -C .",
        # behind other wrappers, and wrappers behind xargs
        "echo push | sudo xargs git",
        "echo push | timeout 5 xargs git",
        "echo push | A=1 nice -n 5 xargs -r git",
        "echo push | env xargs git",
        "echo git push | xargs sudo",
        "echo git push | xargs env",
        # a shell behind xargs runs its input (or the replaced string) as code
        "echo push | xargs -I{} sh -c 'git {}'",
        "echo 'git push' | xargs sh -c",
        # an option not known here: where the command starts is not known
        "echo push | xargs --frobnicate git",
        # find -exec: {} is each file name found (find push -name x runs git push)
        "find push -maxdepth 0 -exec git {} ';'",
        "find push -maxdepth 0 -exec git {} +",
        "find push -maxdepth 0 -exec sh -c 'git {}' ';'",
    ],
)
@pytest.mark.parametrize("rules", [PUSH_ASKED, PUSH_DENIED], ids=["ask-rule", "deny-rule"])
async def test_b49_what_xargs_or_find_may_make_of_a_command_is_asked_about(judge, rules, command):
    """Leaked: the part behind xargs was ``git``, which ``git push*`` does not match,
    yet ``echo push | xargs git`` runs ``git push``. Now a deny or ask pattern that
    could match the command's text followed by more words (at the replace string,
    at ``{}`` of find -exec) asks about it (_xargs, ``Rule.could_continue``), even
    under ``allow: [bash]``; it is no match, so a deny rule asks rather than denies."""
    judged = await judge(rules, "bash", {"command": command})
    assert judged.decision == "ask", judged.event["reason"]
    assert "only complete when it runs" in judged.event["asked"]


@pytest.mark.parametrize(
    "command",
    ["echo push | xargs git", "echo push | xargs -I{} git {}", "find push -exec git {} +"],
)
async def test_b49_what_xargs_may_make_of_a_command_is_denied_in_bypass_mode(judge, command):
    """Leaked in bypass mode (which asks nobody): such a command now is denied."""
    judged = await judge({"deny": ["bash(git push*)"]}, "bash", {"command": command}, mode="bypass")
    assert judged.decision == "deny", judged.event["reason"]
    assert judged.event["rule"] == "deny: bash(git push*)"


@pytest.mark.parametrize(
    ("rules", "command"),
    [
        ({"allow": ["bash"], "deny": ["bash(rm -rf*)"]}, "echo -rf / | xargs rm"),
        ({"allow": ["bash"], "deny": ["bash(rm -rf*)"]}, "echo rf | xargs -I% rm -% /"),
        (
            {"allow": ["bash(ls*)", "bash(xargs *)", "bash(git *)"], "ask": ["bash(git push*)"]},
            "ls | xargs git",
        ),
        ({"allow": ["bash"], "ask": ["bash(chmod 777 *)"]}, "ls | xargs -I% chmod % x"),
    ],
)
async def test_b49_a_deny_pattern_xargs_input_could_complete_asks(judge, rules, command):
    """Leaked: ``rm`` or ``rm -%`` behind xargs missed ``rm -rf*``; ``xargs git`` was
    allowed by ``bash(xargs *)`` past ``git push*``; ``chmod %`` missed
    ``chmod 777 *`` though the input may be ``777``."""
    judged = await judge(rules, "bash", {"command": command})
    assert judged.decision == "ask", judged.event["reason"]


@pytest.mark.parametrize(
    ("rules", "command"),
    [
        (PUSH_ASKED, "ls | xargs ls"),
        (PUSH_ASKED, "ls | xargs -I{} git add {}"),
        (PUSH_ASKED, "ls | xargs git add"),
        (PUSH_ASKED, "ls | sudo xargs -0 wc -l"),
        (PUSH_ASKED, "find . -name '*.py' -exec git add {} +"),
        ({"allow": ["bash(xargs ls*)", "bash(ls*)"], "ask": ["bash(git push*)"]}, "xargs ls"),
        ({"allow": ["bash(xargs ls*)", "bash(ls*)"], "ask": ["bash(git push*)"]}, "xargs ls -l"),
        ({"allow": ["bash"], "deny": ["bash(rm -rf*)"]}, "ls | xargs rm -f"),
    ],
)
async def test_xargs_commands_no_pattern_could_become_are_still_allowed(judge, rules, command):
    """What xargs runs is only asked about when a deny or ask pattern could match what
    it becomes: allow rules still allow ordinary xargs commands."""
    judged = await judge(rules, "bash", {"command": command})
    assert judged.decision == "allow", judged.event["reason"]


async def test_xargs_under_a_deny_rule_it_matches_is_still_denied(judge):
    """``xargs -n1 rm`` already matched ``rm *`` (a final `` *`` matches nothing): it
    stays denied, not merely asked about."""
    rules = {"allow": ["bash"], "deny": ["bash(rm *)"]}
    judged = await judge(rules, "bash", {"command": "ls | xargs -n1 rm"})
    assert judged.decision == "deny", judged.event["reason"]
    assert judged.event["rule"] == "deny: bash(rm *)"


# -- cost: deny and ask readings behind a wrapper -------------------------------------


def _reading_chars(line: str, root: str) -> int:
    subjects = command_subjects(line, root, reads=True)
    return sum(len(r) for s in subjects for r in s.deny)


@pytest.mark.parametrize(
    "unit",
    ["a ", "cat a ", "env ", "-x v ", "sudo -u root "],
    ids=["words", "readers", "nested", "options", "sudo"],
)
def test_readings_behind_a_wrapper_grow_linearly(layout, unit):
    """Every suffix of a command behind a wrapper was a deny reading: 60,000
    characters behind ``env`` made 225 million characters of readings (and
    ``env env env ...`` a subject per wrapper, each with its own suffixes). Now only
    the words that may be the command are readings (``_wrappers.behind``)."""
    root = str(layout.ws)
    line = ("env " + unit * (3000 // len(unit)))[:3000]
    assert _reading_chars(line, root) <= 200 * len(line)


@pytest.mark.timeout(120)  # the quadratic checker took far longer: a failure, not a hang
def test_a_long_command_behind_a_wrapper_is_decided_quickly(judge):
    """A 60,000-character command behind ``env`` (every word a reading program)
    took minutes to decide; it now takes about as long as the same command with no
    wrapper (the split and the file look-ups, linear)."""

    def timed(command: str) -> float:
        best = float("inf")
        for _ in range(2):
            start = time.perf_counter()
            asyncio.run(judge(ALLOW_ALL, "bash", {"command": command}))
            best = min(best, time.perf_counter() - start)
        return best

    plain = timed(("cat " + "cat a " * 10000)[:60000])
    wrapped = timed(("env " + "cat a " * 10000)[:60000])
    assert wrapped < 3 * plain + 0.5, (wrapped, plain)


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


async def test_git_push_through_parallel_is_asked_about(judge):
    """Leaked: GNU parallel was not a wrapper, so the ask rule saw only 'parallel git
    ::: push' (now _parallel: its command gets its arguments at run time, as xargs's)."""
    judged = await judge(PUSH_ASKED, "bash", {"command": "parallel git ::: push"})
    assert judged.decision == "ask"


_GLOB = st.text(alphabet="ab *", max_size=5)


@settings(max_examples=300, deadline=None)
@given(pattern=_GLOB.filter(lambda p: p.strip()), prefix=st.text(alphabet="ab *", max_size=6))
def test_could_continue_agrees_with_trying_every_short_continuation(pattern, prefix):
    """``TextPattern.could_continue(prefix)`` is whether some text beginning with the
    prefix matches. Were there one, a continuation made of the pattern's own characters,
    no longer than the pattern, would do: every such one over the alphabet is tried."""
    compiled = TextPattern.compile(pattern)
    letters = "ab *"
    tails = [""]
    for _ in range(len(pattern)):
        tails += [t + c for t in tails if len(t) == len(tails[-1]) for c in letters]
    expected = any(compiled.matches(prefix + tail) for tail in tails)
    assert compiled.could_continue(prefix) == expected


@pytest.mark.parametrize(
    "line",
    [
        "xargs " * 60 + "git " + "a " * 30_000,
        "xargs -I{} " * 3 + "git " + "a " * 30_000 + "{}",
        "sudo -u root " * 20 + "xargs git " + "a " * 30_000,
    ],
    ids=["xargs-chain", "replace-chain", "behind-sudo"],
)
def test_what_xargs_may_make_of_a_long_command_is_cheap(layout, line):
    """Each xargs that may be the program costs the length of the command, and each
    beginning is kept whole: 60 xargs in front of 60,000 characters took a minute and
    54 million characters of beginnings. Now more than ``MAX_XARGS`` of them make the
    command anything (asked about under any pattern) and beginnings are cut at
    ``OPEN_CHARS`` (which can only make more patterns match)."""
    from dsh_permissions._xargs import MAX_XARGS, OPEN_CHARS

    subjects = command_subjects(line, str(layout.ws), reads=True)
    prefixes = [p for s in subjects for p in s.open]
    assert all(len(p) <= OPEN_CHARS for p in prefixes)
    assert sum(len(p) for p in prefixes) <= 2 * len(line)
    if line.count("xargs") > MAX_XARGS:
        assert "" in prefixes
