"""Findings of session 37's re-review of the option reading (permre 1-4).

1: GNU tar gives each letter of its old-style first word that takes a value the next
word (``tar xf A B`` is ``tar -x -f A B``): ``tar xf -f --to-command=CMD`` has the
archive ``-f`` and runs CMD, but ``-f`` was read as an option taking
``--to-command=...`` for its value; and ``tar xCf -C .env`` reads the archive
``.env``, which was taken for the ``-C`` directory it only writes below.
Each row goes through the real dispatcher (conftest ``judge``).
"""

from __future__ import annotations

import pytest
from permissions_util import BYPASS_ENV, BYPASS_PASSWD, BYPASS_RM, allowed, refused

pytestmark = pytest.mark.plugins("permissions")

# -- 1: tar's old-style first word takes the next words for its letters' values ------


@pytest.mark.parametrize(
    "command",
    [
        "tar xf -f --to-command='rm x'", "tar xf -f -I 'rm x'", "tar xf -C -I 'rm x'",
        "tar xf -b --to-command='rm x'", "tar xf -f --use-compress-program='rm x'",
        "tar xCf -C -f --to-command='rm x'", "tar xbf 20 -f -F 'rm x'",
        "bsdtar xf -f --use-compress='rm x'", "sudo tar xf -f --to-command='rm x'",
    ],
)  # fmt: skip
async def test_1_an_option_after_the_old_style_values_is_read(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")


@pytest.mark.parametrize(
    "command",
    [
        "tar xf -f --to-command='cat .env'",
        "tar xCf -C .env",  # the archive .env (C: the directory -C)
        "tar xXf -C .env",  # the exclude list -C, the archive .env
        "tar xfX -C .env",  # the exclude list .env
        "tar xfg -C .env",  # the snapshot file .env
    ],
)
async def test_1_a_file_the_old_style_values_name_is_read(judge, command):
    await refused(judge, BYPASS_ENV, command, mode="bypass")


@pytest.mark.parametrize(
    "command",
    [
        "tar cf x.tar --dir /etc passwd", "tar cf x.tar --dir=/etc passwd",
        "tar cf x.tar --direc=/etc passwd", "tar cCf /etc x.tar passwd",
        "tar cfC x.tar /etc passwd",
    ],
)  # fmt: skip
async def test_1_tar_reads_from_its_directory_however_it_is_named(judge, command):
    """``--dir`` is ``--directory`` shortened (getopt): it was taken for the directory
    tar writes below (as unpacking), so ``passwd`` was read here."""
    await refused(judge, BYPASS_PASSWD, command, mode="bypass")


@pytest.mark.parametrize(
    "command",
    [
        "tar xf a.tar", "tar xCf out a.tar", "tar xzf a.tgz -C out", "tar tf a.tar",
        "tar xf a.tar --to-stdout", "tar czf x.tgz src",
    ],
)  # fmt: skip
async def test_1_plain_tar_lines_are_still_allowed(judge, command):
    await allowed(judge, BYPASS_RM, command, mode="bypass")
    await allowed(judge, BYPASS_ENV, command, mode="bypass")


# -- 2: git's global options, --shallow-file and those not known ----------------------

GIT_RUNNING = [
    "git --shallow-file x rebase -x 'rm x'", "git --shallow-file log bisect run rm x",
    "git --shallow-file log submodule foreach rm x",
    "git --no-pager --shallow-file x -C . rebase --exec='rm x' main",
    # a global option not known here may take the next word: which is the subcommand
    # is not known (a newer git's option, or a misspelt one git refuses)
    "git --frobnicate x rebase -x 'rm x'", "git --frobnicate log bisect run rm x",
    "git --shallow x rebase -x 'rm x'", "git -X log submodule foreach rm x",
]  # fmt: skip


@pytest.mark.parametrize("command", GIT_RUNNING)
async def test_2_git_global_options_before_a_running_subcommand(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")
    await refused(judge, {"allow": ["bash(git *)"]}, command)


@pytest.mark.parametrize(
    "command",
    [
        "git --shallow-file x log", "git --no-optional-locks status",
        "git --literal-pathspecs --glob-pathspecs diff", "git --bare log",
        "git --git-dir=.git --work-tree=. status", "git --namespace n log",
        "git --exec-path", "git --list-cmds=main", "git --version", "git --help log",
        "git -p log", "git -P --no-replace-objects log",
    ],
)  # fmt: skip
async def test_2_git_global_options_known_change_nothing(judge, command):
    await allowed(judge, {"allow": ["bash(git *)"]}, command)
    await allowed(judge, BYPASS_RM, command, mode="bypass")


# -- 4: env -S after an option whose value holds S -----------------------------------


@pytest.mark.parametrize(
    ("command", "string"),
    [
        ("env -uS -S 'cat .env'", "cat .env"), ("env -u -S -S 'cat .env'", "cat .env"),
        ("env --chdir -S -S 'cat .env'", "cat .env"), ("env -CS -S 'cat .env'", "cat .env"),
        ("env -iS 'cat .env'", "cat .env"), ("env -vS'cat .env'", "cat .env"),
        ("env -uX -iuS cat .env", None),
    ],
)  # fmt: skip
async def test_4_the_string_env_splits_is_read_as_getopt_reads_it(judge, command, string):
    """``S`` in an option's value (``-uS``: unset ``S``; ``-u -S``: unset ``-S``) was
    taken for ``-S``, whose string was then ``-S``; the line was denied by another
    path (the reason names ``env cat .env``)."""
    from dsh_permissions._shell import split
    from dsh_permissions._wrapper_grammar import split_string

    words = [w.text for w in split(command)[0].words]
    split = split_string(words, 0)
    assert (split and split[2]) == string
    await refused(judge, BYPASS_ENV, command, mode="bypass")
