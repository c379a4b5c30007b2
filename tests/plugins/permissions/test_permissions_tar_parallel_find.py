"""Option tables checked against the programs' own, and a command that may be anything.

1: GNU tar and bsdtar (libarchive's, macOS's and the BSDs' ``tar``) disagree on four
letters: GNU's ``-H FORMAT`` and ``-L N`` take a value where bsdtar's ``-H`` and ``-L``
(follow symbolic links) do not; bsdtar's ``-s PATTERN`` and ``-W OPTION=VALUE`` take
one where GNU's ``-s`` and ``-W`` (``--same-order``, ``--verify``) do not. Either
reading gives the other's values to the wrong letters (or reads them as options and
files), so a tar line with one of them is one whose effects are not known.

2: GNU parallel's ``--trim`` takes a value; ``--shebang-wrap`` takes none, is read only
as the first word and makes parallel run its words again through ``/bin/sh``.

3: parallel reads its options with Perl's Getopt::Long: ``--eof`` and ``--max-lines``
take their value only when the next word looks like one (``--eof rm x`` has no value
when ``rm`` starts with ``-``; ``--max-lines rm`` none when ``rm`` is not a number),
and a word starting with ``+`` is an option too (``+k`` is ``--keep-order``).

4: GNU find's ``-files0-from FILE`` reads its starting points from a file.

5: a command that may become any command (an option not known here of a program that
runs commands, parallel given no command, code run with xargs's or find's words) may
read any file: the ``read`` tool's deny and ask rules are held against it.

Each row goes through the real dispatcher (conftest ``judge``); nothing is run.
"""

from __future__ import annotations

import pytest
from permissions_util import BYPASS_ENV, BYPASS_PASSWD, BYPASS_RM, DENY_RM, allowed, refused

from dsh_permissions._parallel import command_words

pytestmark = pytest.mark.plugins("permissions")

# -- 1: the letters GNU tar and bsdtar read differently ------------------------------


@pytest.mark.parametrize(
    "command",
    [
        # bsdtar: -s takes x, -f the archive .env (GNU: the archive x, the member .env)
        "tar xsf x .env", "bsdtar xsf x .env", "tar -xs x -f .env",
        # GNU: the archive .env (bsdtar: -s takes .env)
        "tar xsf .env y",
        # bsdtar: -H, -L take none, so .env is packed (GNU: -L takes x.tar)
        "tar cLf x.tar .env", "tar cHf x.tar .env", "tar -cL x.tar -f y.tar .env",
        # bsdtar: -W gives a long option
        "tar -c -W files-from=.env -f x.tar", "tar cWf files-from=.env x.tar",
    ],
)  # fmt: skip
async def test_1_a_letter_tars_disagree_on_hides_what_is_read(judge, command):
    await refused(judge, BYPASS_ENV, command, mode="bypass")


@pytest.mark.parametrize(
    "command",
    [
        "tar -cf x.tar -W directory=/etc passwd", "tar -c -W cd=/etc -f x.tar passwd",
        "tar cfW x.tar directory=/etc passwd",
    ],
)  # fmt: skip
async def test_1_bsdtar_w_names_a_directory(judge, command):
    await refused(judge, BYPASS_PASSWD, command, mode="bypass")


@pytest.mark.parametrize(
    "command",
    [
        # bsdtar: -L takes none, the long option runs the program (GNU: -L's value)
        "tar -xL --use-compress-program='rm x' -f a.tar",
        "tar xLf 1 a.tar --use-compress-program='rm x'",
        "tar -xH --use-compress-program='rm x' -f a.tar",
        # bsdtar: -W gives the long option that runs a program
        "tar -x -W use-compress-program='rm x' -f a.tar", "tar -xWuse-compress='rm x' -f a",
        "tar xWf use-compress-program='rm x' a.tar",
        # GNU: -s takes none, -I runs a program (bsdtar: -s's value)
        "tar -xsI 'rm x' -f a.tar",
    ],
)  # fmt: skip
async def test_1_a_letter_tars_disagree_on_hides_what_is_run(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")


@pytest.mark.parametrize(
    "command",
    [
        # bsdtar unpacks into src/config (-s takes build; -L, -H, -W... none or build),
        # where the archive may plant x as a link to /etc/passwd
        "tar xsCf build src/config a.tar && cat src/config/x",
        "tar xLCf src/config build a.tar && cat src/config/x",
        "tar xHCf src/config build a.tar && cat src/config/x",
        "tar xWCf build src/config a.tar && cat src/config/x",
    ],
)
async def test_1_a_read_after_tar_unpacks_where_the_tars_disagree(judge, command):
    await refused(judge, {"allow": ["bash(*)"], "deny": ["read(/etc/passwd)"]}, command)


@pytest.mark.parametrize(
    "command",
    [
        "tar xf a.tar", "tar -xzf a.tgz -C out", "tar czf x.tgz src", "tar tvf a.tar",
        # the letters in a value, after --, or in a word that is no option
        "tar -cf Ls.tar src", "tar xf HW.tar", "tar -xf a.tar -- -L", "tar -xf a.tar sLHW",
        "tar -C sLHW -xf a.tar",
    ],
)  # fmt: skip
async def test_1_tar_lines_without_those_letters_are_still_allowed(judge, command):
    await allowed(judge, BYPASS_RM, command, mode="bypass")
    await allowed(judge, BYPASS_ENV, command, mode="bypass")


# -- 2: parallel's --trim takes a value; --shebang-wrap is no option to read ---------


def test_2_trim_takes_a_value():
    words = ["parallel", "--trim", "lr", "rm", "{}", ":::", "x"]
    assert command_words(words, 0) == (3, 5)
    assert command_words(["parallel", "--trim=lr", "rm", ":::", "x"], 0) == (2, 3)


@pytest.mark.parametrize(
    "words",
    [
        ["parallel", "--shebang-wrap", "rm", "x"],
        ["parallel", "--shebang", "x; rm y", "f"],
        ["parallel", "--shebangwrap", "rm", "x"],
        ["parallel", "--hashbang", "x; rm y", "f"],
    ],
)
def test_2_shebang_options_are_not_known(words):
    """parallel runs ``exec "$0 ... @ARGV"`` for them: its words go through a shell."""
    assert command_words(words, 0) is None


@pytest.mark.parametrize(
    "command",
    [
        "parallel --trim n rm x ::: y", "parallel --trim lr rm {} ::: x",
        "parallel --shebang-wrap rm x", "parallel --shebang 'true; rm y' f",
        "sem --trim n rm x",
    ],
)  # fmt: skip
async def test_2_what_parallel_runs_after_trim_and_shebang(judge, command):
    await refused(judge, DENY_RM, command)
    await refused(judge, BYPASS_RM, command, mode="bypass")


# -- 3: Getopt::Long's optional values and its + prefix ------------------------------


@pytest.mark.parametrize(
    "words",
    [
        ["parallel", "--eof", "-I", "XX", "rm", "XX", ":::", "y"],
        ["parallel", "--max-lines", "rm", "x", ":::", "y"],
        ["parallel", "+k", "rm", "x", ":::", "y"],
        ["parallel", "-j2", "+I", "XX", "rm", "XX", ":::", "y"],
    ],
)
def test_3_getopt_long_readings_not_known(words):
    assert command_words(words, 0) is None


@pytest.mark.parametrize(
    "command",
    [
        "parallel --eof -I XX rm XX ::: y", "parallel --max-lines rm x ::: y",
        "parallel +k rm x ::: y", "parallel +I XX rm XX ::: y", "sem +q rm x",
    ],
)  # fmt: skip
async def test_3_what_parallel_runs_after_getopt_long_options(judge, command):
    await refused(judge, DENY_RM, command)
    await refused(judge, BYPASS_RM, command, mode="bypass")


@pytest.mark.parametrize(
    "command",
    ["parallel --trim lr echo ::: x", "parallel -k -j2 echo {} ::: x", "parallel echo ::: +k"],
)
async def test_3_plain_parallel_lines_are_still_allowed(judge, command):
    await allowed(judge, DENY_RM, command)


# -- 4: find -files0-from reads its starting points from a file ----------------------


@pytest.mark.parametrize(
    "command",
    ["find -files0-from .env", "find . -files0-from .env -name x", "sudo find -files0-from .env"],
)
async def test_4_find_files0_from_reads_its_list(judge, command):
    """GNU find 4.9's ``-files0-from FILE``: its errors print the names it read
    (``find: 'KEY=...': No such file or directory``)."""
    await refused(judge, BYPASS_ENV, command, mode="bypass")


@pytest.mark.parametrize("command", ["find . -name '*.py'", "find src -type f", "find -files0"])
async def test_4_find_without_a_list_is_still_allowed(judge, command):
    await allowed(judge, BYPASS_ENV, command, mode="bypass")


# -- 5: a command that may be anything may read any file --------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "parallel --sshloginfile .env echo ::: x", "parallel --slf .env echo ::: x",
        "parallel --basefile .env echo ::: x", "parallel --bf .env echo ::: x",
        "parallel --template .env=out echo ::: x", "parallel --tmpl .env=out echo ::: x",
    ],
)  # fmt: skip
async def test_an_unknown_parallel_option_may_read_a_file(judge, command):
    """An option not known here makes parallel's command anything: it is held against
    the read rules as a file only the shell knows is (``cat $F``)."""
    await refused(judge, BYPASS_ENV, command, mode="bypass")
    judged = await refused(judge, {"allow": ["bash"], "deny": ["read(.env)"]}, command)
    assert judged.decision == "ask", judged.event["reason"]
    assert "may be any command" in judged.requests[0].reason
    await refused(judge, {"allow": ["bash"], "ask": ["read(.env)"]}, command)
    judged = await judge({"allow": ["bash"], "deny": ["read"]}, "bash", {"command": command})
    assert judged.decision == "deny", judged.event["reason"]


@pytest.mark.parametrize(
    "command",
    [
        # xargs: an option not known here; more than 4 xargs that may be the program
        "xargs --no-such-option .env echo", "xargs xargs xargs xargs xargs echo",
        # parallel given no command: its arguments are the commands
        "parallel ::: 'cat .env'", "echo 'cat .env' | parallel",
        # find puts a file name into code a shell runs
        "find . -exec sh -c 'cat {}' \\;",
        # behind a wrapper, in a script
        "sudo parallel --slf .env echo ::: x", "sh -c 'parallel --slf .env echo ::: x'",
        "timeout 5 xargs --no-such-option .env echo",
    ],
)  # fmt: skip
async def test_other_commands_that_may_be_anything_may_read_a_file(judge, command):
    await refused(judge, BYPASS_ENV, command, mode="bypass")
    await refused(judge, {"allow": ["bash"], "deny": ["read(.env)"]}, command)


@pytest.mark.parametrize(
    "command",
    [
        "parallel echo ::: x", "parallel -j2 echo {} ::: a b", "ls | xargs echo",
        "echo x | xargs -n1 echo", "find . -name '*.py' -exec echo {} +",
    ],
)  # fmt: skip
async def test_commands_whose_command_is_known_are_still_allowed(judge, command):
    await allowed(judge, BYPASS_ENV, command, mode="bypass")
