"""Bypasses found by session 47's hunt on the shell reading (behaviour 49: chaining and the
shell's own ways of running code must not smuggle a denied command or read past a rule).

1: bash's history expansion (``set -H`` / ``set -o histexpand`` with ``set -o
history``): a later line's ``!!:1-2`` runs words of an earlier one. 2: a quoted compound
assignment given to ``declare -a`` (``typeset``, ``local``, ``readonly -a``, ``export
-a``; ``declare`` of a name already an array) is read again by bash, and the ``$(...)``
it holds runs. 3: ``source NAME``, ``. NAME`` and ``bash NAME`` look ``NAME`` up in
``PATH``, which the line may set. 4: the precommand words of zsh (``noglob``,
``nocorrect``, ``-``, ``repeat N``), fish (``and``, ``or``, ``not``) and csh (``repeat
N``) run the command after them in their ``-c`` scripts. 5: bash's ``autocd``
(interactive shells) runs ``cd DIR`` for a command naming a directory. 6: ``git
remote-ext`` runs the command it is given, ``git daemon --access-hook`` too, and ``git
filter-repo``'s callbacks are Python code. 7: bash translates ``$"..."`` through the
message catalog ``TEXTDOMAIN`` names: ``$"ls"`` may run ``rm``. 8: in a ``zsh -c``
script ``$~x`` and ``$=x`` are x's value, ``${(e)x}`` runs the substitutions it holds,
and ``=rm`` is the path of ``rm``. 9: an output redirection through a link an earlier
command of the line made (``ln -s /etc/passwd w; echo x > w``) writes where the link
leads. 10: ``rg --pre CMD`` runs CMD on each file it searches, ``fd -x CMD`` on each
file it finds, ``strace -o '|CMD'`` pipes to CMD, ``bat``, ``ag`` and ``ack`` run their
``--pager``, ``diff3`` and ``sdiff`` their ``--diff-program`` and ``install -s`` its
``--strip-program``. 11: fish runs ``cd`` for a command naming a directory (``/etc/``,
``a/``, ``..``). Each row goes through the real dispatcher (conftest ``judge``).
"""

from __future__ import annotations

import pytest
from permissions_util import BYPASS_PASSWD, BYPASS_RM, DENY_RM, allowed, refused

pytestmark = pytest.mark.plugins("permissions")

OPEN_PASSWD = {"allow": ["bash(*)"], "deny": ["read(/etc/passwd)"]}
BYPASS_ENV = {"deny": ["read(.env)"]}
GIT_ONLY = {"allow": ["bash(git *)"], "deny": ["bash(rm *)"]}
#: every command allowed, only reads of .env denied: a plain value is no question
OPEN_ENV = {"allow": ["bash"], "deny": ["read(.env)"]}


# -- 1: history expansion --------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "set -o history -H\necho rm x\n!!:1-2", "set -o history; set -H\necho rm x\n!!:1-2",
        "set -o history -o histexpand\necho rm x\n!!:1-$", "set -Ho history\n: rm x\n!:1-2",
        "bash -ic 'set -o history\necho rm x\n!!:1-2'", "set -eH", "set -o history",
        "bash -H -o history -c 'echo rm x\n!!:1-2'", "shopt -os history", "set $opts",
        "SHELLOPTS=history:histexpand bash -c 'echo rm x\n!!:1-2'",
        "env SHELLOPTS=histexpand:history bash -c 'echo rm x\n!!:1-2'",
        "sh -c 'set -H; set -o history\necho rm x\n!!:1-2'", "builtin set -H",
        "eval 'set -o history -H'\necho rm x\n!!:1-2",
    ],
)  # fmt: skip
async def test_b49_a_line_that_may_turn_on_history_expansion_is_not_allowed(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")
    judged = await judge(DENY_RM, "bash", {"command": command})
    assert judged.decision in ("ask", "deny"), (command, judged.event["reason"])


async def test_1_the_reason_names_history_expansion(judge):
    judged = await refused(judge, BYPASS_RM, "set -o history -H\necho rm x\n!!:1-2", "bypass")
    assert "history expansion" in judged.event["reason"], judged.event["reason"]


@pytest.mark.parametrize(
    "command",
    ["set -euo pipefail; echo rm x", "set +H; echo hi", "set -- -H", "echo set -H", "history"],
)
async def test_1_other_set_commands_pass(judge, command):
    await allowed(judge, DENY_RM, command)


# -- 2: a quoted compound assignment given to declare ---------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "declare -a a='($(rm y))'", "declare -a a='(`rm y`)'", 'declare -a a="(\\$(rm y))"',
        "typeset -a a='($(rm y))'", "readonly -a a='($(rm y))'", "export -a a='($(rm y))'",
        "declare -ga a='($(rm y))'", "declare -a 'a=($(rm y))'", "declare -a a+='($(rm y))'",
        "declare -a a=\\(\\$\\(rm\\ y\\)\\)", "declare -a a='(<(rm y))'",
        "x='($(rm y))'; declare -a a=\"$x\"", "x='($(rm y))'; declare -a a=$x",
        "x='a=($(rm y))'; declare -a \"$x\"", "declare -a a; declare a='($(rm y))'",
        "declare -a a=$'(\\x24(rm y))'",
    ],
)  # fmt: skip
async def test_b49_an_array_given_to_declare_runs_what_it_holds(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")
    judged = await judge(DENY_RM, "bash", {"command": command})
    assert judged.decision in ("ask", "deny"), (command, judged.event["reason"])


@pytest.mark.parametrize(
    "command",
    [
        "declare -a a='($(cat .env))'; echo \"${a[@]}\"",
        "x='($(cat .env))'; declare -a a=\"$x\"", "x='($(cat .env))'; declare PIPESTATUS=$x",
        "x='($(cat .env))'; read -a a <<< q; declare a=\"$x\"",
        "x='($(cat .env))'; mapfile a < /dev/null; typeset a=\"$x\"",
        "x='($(cat .env))'; mapfile < /dev/null; declare MAPFILE=\"$x\"",
        "x='($(cat .env))'; declare -A a; declare a=\"$x\"",
        "x='($(cat .env))'; declare -a a; declare -n r=a; declare r=\"$x\"",
        "x='($(cat .env))'; declare 'a[0]=1'; declare a=\"$x\"",
        "x='DIRSTACK=($(cat .env))'; declare \"$x\"",
        "x='($(cat .env))'; eval 'declare -a a'; declare a=\"$x\"",
    ],
)  # fmt: skip
async def test_2_a_read_through_declare_is_not_allowed(judge, command):
    await refused(judge, BYPASS_ENV, command, mode="bypass")


@pytest.mark.parametrize(
    "command",
    [
        "declare -a a", "declare -x FOO=bar", "export PATH=$HOME/bin:$PATH",
        "readonly X=1", "declare -r V=1.2", "declare -a x=a$y", "export A='(x)'",
        "declare x=$y", "declare a='(x)'", "read -a a <<< q; declare b=\"$x\"",
    ],
)  # fmt: skip
async def test_2_plain_declarations_pass(judge, command):
    await allowed(judge, OPEN_ENV, command)


# -- 3: a script looked up in PATH -----------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "PATH=/etc; . passwd", "PATH=/etc . passwd", "PATH=/etc source passwd",
        "export PATH=/etc:$PATH; source passwd", "PATH=/etc bash passwd",
        "PATH=/etc; bash passwd", "env PATH=/etc sh passwd", "PATH=/etc sh -c '. passwd'",
    ],
)  # fmt: skip
async def test_b49_a_script_looked_up_in_a_path_the_line_sets(judge, command):
    await refused(judge, BYPASS_PASSWD, command, mode="bypass")
    await refused(judge, OPEN_PASSWD, command)


async def test_3_a_script_looked_up_in_dsh_own_path(judge, layout, monkeypatch):
    (layout.outside / "secret.sh").write_text("echo secret\n")
    monkeypatch.setenv("PATH", f"{layout.outside}:/usr/bin:/bin")
    rules = {"deny": [f"read({layout.outside}/**)"]}
    for command in (". secret.sh", "source secret.sh", "bash secret.sh"):
        await refused(judge, rules, command, mode="bypass")
    await allowed(judge, {"allow": ["bash(*)"], **rules}, ". src/a.py")


# -- 4: other shells' precommand words -------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "fish -c 'true; and rm t'", "fish -c 'not rm t'", "fish -c 'false; or rm t'",
        "zsh -c 'noglob rm t'", "zsh -c 'nocorrect rm t'", "zsh -c 'true; - rm t'",
        "zsh -c 'repeat 1 rm t'", "tcsh -c 'repeat 1 rm t'",
    ],
)  # fmt: skip
async def test_b49_a_precommand_word_of_another_shell(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")
    judged = await judge(DENY_RM, "bash", {"command": command})
    assert judged.decision == "deny", (command, judged.event["reason"])


@pytest.mark.parametrize(
    ("rules", "command"),
    [
        (BYPASS_ENV, "fish -c 'true; and cat .env'"), (BYPASS_ENV, "zsh -c 'noglob cat .env'"),
        (BYPASS_PASSWD, "zsh -c 'nocorrect cd /etc; cat passwd'"),
        (BYPASS_PASSWD, "fish -c 'not cd /etc; cat passwd'"),
    ],
)  # fmt: skip
async def test_4_a_read_or_cd_behind_a_precommand_word(judge, rules, command):
    await refused(judge, rules, command, mode="bypass")


@pytest.mark.parametrize("command", ["echo and rm x", "grep -r noglob src", "git log -- -"])
async def test_4_the_words_elsewhere_are_arguments(judge, command):
    await allowed(judge, DENY_RM, command)


# -- 5: autocd --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "bash -ic 'shopt -s autocd; /etc; cat passwd'", "bash -O autocd -ic '/etc; cat passwd'",
        "bash -i -c 'shopt -s autocd; link_etc; cat passwd'",
        "BASHOPTS=autocd bash -ic '/etc; cat passwd'", "shopt -s autocd",
    ],
)  # fmt: skip
async def test_b49_a_line_that_may_turn_on_autocd(judge, command):
    await refused(judge, BYPASS_PASSWD, command, mode="bypass")
    await refused(judge, OPEN_PASSWD, command)


# -- 6: git subcommands that run a command --------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "git remote-ext x 'sh -c rm% y' < requests", "git daemon --access-hook='rm y'",
        "git filter-repo --commit-callback 'import os; os.system(\"rm y\")'",
        "git filter-repo --blob-call='x'",
    ],
)  # fmt: skip
async def test_b49_a_git_subcommand_that_runs_a_command(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")
    await refused(judge, GIT_ONLY, command)


@pytest.mark.parametrize("command", ["git daemon --export-all", "git filter-repo --analyze"])
async def test_6_other_uses_pass(judge, command):
    await allowed(judge, GIT_ONLY, command)


# -- 7: $"..." is translated ------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "TEXTDOMAINDIR=./d TEXTDOMAIN=t bash -c '$\"ls\" x'", "$\"ls\" x",
        "export TEXTDOMAINDIR=d TEXTDOMAIN=t\n$\"ls\" x",
    ],
)  # fmt: skip
async def test_b49_a_translated_string_is_only_known_when_the_shell_runs(judge, command):
    # bash looks $"..." up in TEXTDOMAIN's message catalog, which may say "rm"
    await refused(judge, BYPASS_RM, command, mode="bypass")
    await refused(judge, {"allow": ["bash(ls *)", "bash(export *)", "bash(*bash -c *)"]}, command)


async def test_7_a_deny_rule_still_sees_its_text(judge):
    judged = await judge(BYPASS_RM, "bash", {"command": '$"rm" x'}, mode="bypass")
    assert judged.decision == "deny" and "deny: bash(rm *)" in judged.event["reason"]


# -- 8: zsh's expansions ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("rules", "command"),
    [
        (BYPASS_RM, "zsh -c 'x=rm; $~x t'"), (BYPASS_RM, "zsh -c 'x=rm; $=x t'"),
        (BYPASS_RM, "zsh -c 'x=rm; $^x t'"), (BYPASS_RM, "zsh -c 'x=\"rm t\"; $=x'"),
        (BYPASS_ENV, "zsh -c 'read x < notes; echo ${(e)x}'"),
        (BYPASS_ENV, "zsh -c 'read x < notes; echo ${(P)x}'"),
        (BYPASS_ENV, "zsh -c 'read x < notes; echo \"${(e)x}\"'"),
    ],
)  # fmt: skip
async def test_b49_a_zsh_expansion_is_only_known_when_the_shell_runs(judge, rules, command):
    await refused(judge, rules, command, mode="bypass")


@pytest.mark.parametrize("command", ["zsh -c '=rm t'", "zsh -c 'command =rm t'", "=rm t"])
async def test_b49_zsh_equals_expansion_names_a_program(judge, command):
    # in zsh, =rm is the path of rm (in bash a word like any)
    await refused(judge, BYPASS_RM, command, mode="bypass")
    await refused(judge, DENY_RM, command)


@pytest.mark.parametrize("command", ["test a = b", "[ a == b ]", "echo =", "echo x=y"])
async def test_8_an_equals_sign_elsewhere_is_a_word(judge, command):
    await allowed(judge, DENY_RM, command)


# -- 9: a redirection through a link the line made ---------------------------------------

DENY_ETC_WRITE = {"allow": ["bash"], "deny": ["bash(> /etc/*)"]}


@pytest.mark.parametrize(
    "command",
    [
        "ln -s /etc/passwd w; echo x > w", "ln -s /etc w; echo x > w/passwd",
        "ln -sf /etc/passwd w && echo x >> w", "cp -P link_etc w; echo x > w/passwd",
        "tar xf evil.tar; echo x > w/passwd", "mv link_etc w; echo x > w/passwd",
        "ln -s /etc/passwd w; sh -c 'echo x > w'", "unzip a.zip; echo x 2> w",
    ],
)  # fmt: skip
async def test_b49_a_redirection_through_a_link_the_line_made(judge, command):
    await refused(judge, {"deny": ["bash(> /etc/*)"]}, command, mode="bypass")
    await refused(judge, DENY_ETC_WRITE, command)


@pytest.mark.parametrize(
    "command", ["ln -s /etc/passwd w; echo x > notes.txt", "tar xf a.tar -C out; echo x > log"]
)
async def test_9_a_redirection_elsewhere_passes(judge, command):
    await allowed(judge, DENY_ETC_WRITE, command)


# -- 10: a searcher's command or pager ------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "rg --pre rm x src", "rg --pre=./pre.sh x src", "rg -i --pre 'sh' x .",
        "batcat --paging=always --pager='rm x' src/a.py", "bat --pager 'rm x' src/a.py",
        "ag --pager 'rm x' foo", "ack --pager='rm x' foo",
        "RIPGREP_CONFIG_PATH=./rc rg x src", "export RIPGREP_CONFIG_PATH=rc; rg x src",
        "PAGER='rm x' bat --paging=always src/a.py", "ACK_OPTIONS=--pager=rm ack foo",
        "diff3 --diff-program=rm a b c", "sdiff --diff-prog rm a b",
        "install -s --strip-program=rm a b", "sudo install --strip-p=rm -s a b",
        "fdfind . src -x rm", "fd -e py -X rm", "fd -Hx rm", "fd --exec-batch rm",
        "fd -e py --exec rm {}", "strace -o '|rm x' true", "strace -fo'!rm x' true",
        "strace --output='|rm x' true", "strace --output '|rm x' true",
        "sudo strace -o '|rm x' ls",
    ],
)  # fmt: skip
async def test_b49_a_searcher_given_a_command_to_run(judge, command):
    # rg --pre runs COMMAND FILE for each file it searches; bat and ag their pager
    await refused(judge, BYPASS_RM, command, mode="bypass")
    await refused(judge, {"allow": ["bash"], "deny": ["bash(rm *)"]}, command)


@pytest.mark.parametrize(
    "command",
    [
        "rg --pretty x src", "rg --pre-glob '*.gz' x src", "install --strip a b",
        "install -s -m 755 a b", "diff3 a b c", "fd -e py x src", "fd -E x -t f y",
        "strace -o trace.log ls", "strace -f -e trace=file ls",
    ],
)  # fmt: skip
async def test_10_other_options_pass(judge, command):
    await allowed(judge, DENY_RM, command)


# -- 11: fish's implicit cd --------------------------------------------------------------


@pytest.mark.parametrize(
    ("rules", "command"),
    [
        (BYPASS_PASSWD, "fish -c '/etc/; cat passwd'"),
        (BYPASS_PASSWD, "fish -c 'link_etc/; cat passwd'"),
        (BYPASS_PASSWD, "fish -c '/etc; cat passwd'"),
        (BYPASS_ENV, "fish -c 'mkdir -p a; a/; cat ../.env'"),
        (BYPASS_ENV, "fish -c 'src/; cat ../.env'"),
    ],
)  # fmt: skip
async def test_b49_a_program_naming_a_directory_may_go_there(judge, rules, command):
    # fish runs cd for a command naming a directory (a word holding / or ..)
    await refused(judge, rules, command, mode="bypass")


@pytest.mark.parametrize("command", ["./src/a.py; cat src/a.py", "src/a.py && cat src/a.py"])
async def test_11_a_program_naming_a_file_runs_it(judge, command):
    await allowed(judge, OPEN_PASSWD, command)
