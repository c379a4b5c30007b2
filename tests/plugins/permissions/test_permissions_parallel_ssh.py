"""GNU parallel's remote options run commands and read files (behaviour 49: a command
must not be smuggled past a rule). From GNU parallel's manual (20221122):

1: ``--ssh CMD`` is the ssh command parallel runs, through a shell: a command line. It
is an option of its own, no abbreviation of ``--sshlogin`` (Getopt::Long takes an
exact name first, and ``--ss``/``--sshl`` are ambiguous there), so no long option is
read as an abbreviation here: any such reading may be another option.

2: an sshlogin (``--sshlogin``/``-S``) is ``[@groups/][ncpus/][sshcommand
[options]] [user[:password]@]host``: it may name its own ssh command
(``-S 'ssh -p 2222 host'``, ``-S '4//usr/bin/myssh host'``); ``..`` reads
``~/.parallel/sshloginfile`` and ``-`` reads the logins from the input. Only a plain
list of hosts (``host``, ``user@host:port``, ``8/host``, ``@group/host``, ``:``) keeps
what parallel runs known.

3: ``--sshloginfile``/``--slf`` (logins from a file), ``--controlmaster``/``-M``,
``--transfer``/``--transferfile``/``--return``/``--cleanup``/``--trc``/``--basefile``
(files copied with rsync), ``--nonall``/``--onall``, ``--filter-hosts`` and
``--ssh-delay`` are not read here: parallel's command is then anything, held against
the ``bash`` and ``read`` rules.

4: the environment variables parallel reads its options (``PARALLEL``), its shell
(``PARALLEL_SHELL``), its ssh command (``PARALLEL_SSH``) or its settings
(``PARALLEL_HOME``, ``HOME``, ``XDG_CONFIG_HOME``) from, set in the line, make its
command anything too.

5: parallel's ``{= perl =}`` replacement strings run Perl here (``sem`` too).

6: a plain sshlogin with a ``/`` as a word of its own (``-S 8/host``) keeps parallel's
command known.

Each row goes through the real dispatcher (conftest ``judge``); nothing is run.
"""

from __future__ import annotations

import pytest
from permissions_util import BYPASS_ENV, BYPASS_RM, DENY_RM, allowed, refused

from dsh_permissions._parallel import command_words

pytestmark = pytest.mark.plugins("permissions")

READ_DENIED = {"allow": ["bash"], "deny": ["read(.env)"]}

# -- 1: --ssh names a command; no long option is taken for an abbreviation ------------


@pytest.mark.parametrize(
    "command",
    [
        "parallel --ssh='rm y;' -S host echo ::: x",
        "parallel --ssh 'rm y;' -S host echo ::: x",
        "parallel --ssh=rm -S host echo ::: x",
        "sem --ssh 'rm y;' -S host echo",
        "sudo parallel --ssh='rm y;' -S host echo ::: x",
    ],
)
async def test_b49_ssh_command_is_anything(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")
    await refused(judge, DENY_RM, command)


@pytest.mark.parametrize(
    "command",
    [
        "parallel --ssh 'cat .env #' -S host echo ::: x",
        "parallel --ssh='cat .env;' -S host echo ::: x",
    ],
)
async def test_b49_ssh_command_may_read_any_file(judge, command):
    await refused(judge, BYPASS_ENV, command, mode="bypass")
    await refused(judge, READ_DENIED, command)


@pytest.mark.parametrize(
    "words",
    [
        ["parallel", "--ssh", "rm y;", "echo", ":::", "x"],
        ["parallel", "--ssh=rm y;", "echo", ":::", "x"],
        # abbreviations: Getopt::Long resolves them among all of parallel's options
        ["parallel", "--sshlog", "h", "echo", ":::", "x"],
        ["parallel", "--job=2", "echo", ":::", "x"],
        ["parallel", "--ver", "echo", ":::", "x"],
    ],
)
def test_long_options_are_read_by_their_exact_names(words):
    assert command_words(words, 0) is None


# -- 2: an sshlogin may carry its own ssh command --------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "parallel --sshlogin='rm y; true' echo ::: x",
        "parallel --sshlogin 'rm y; true' echo ::: x",
        "parallel -S 'rm y; true' echo ::: x",
        "parallel -S'rm y; true' echo ::: x",
        "parallel -kS 'rm y; true' echo ::: x",
        "parallel -S host -S 'rm y; true' echo ::: x",
        "parallel -S 'host,rm y; true' echo ::: x",
        "parallel -S '4//bin/rm y host' echo ::: x",
        "parallel -S '@g/2/rm -f y host' echo ::: x",
        # the logins are read from a file or from the input
        "parallel -S .. echo ::: x", "echo 'rm y; true' | parallel -S - echo ::: x",
        # ssh's own options: -o ProxyCommand runs a command
        "parallel -S -oProxyCommand=rm echo ::: x", "parallel -S 'host;rm y' echo ::: x",
        "sem -S 'rm y; true' echo",
    ],
)  # fmt: skip
async def test_b49_sshlogin_with_a_command_is_anything(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")
    await refused(judge, DENY_RM, command)


@pytest.mark.parametrize(
    "command",
    [
        "parallel -S 'ssh -F .env host' echo ::: x",
        "parallel --sshlogin 'cat .env # host' echo ::: x",
    ],
)
async def test_b49_sshlogin_with_a_command_may_read_any_file(judge, command):
    await refused(judge, BYPASS_ENV, command, mode="bypass")
    await refused(judge, READ_DENIED, command)


@pytest.mark.parametrize(
    "words",
    [
        ["parallel", "-S", "host", "echo", ":::", "x"],
        ["parallel", "-S", "user@host:2222,8/other.example.com", "echo", ":::", "x"],
        ["parallel", "--sshlogin=@group1+group2/host-1", "echo", ":::", "x"],
        ["parallel", "-S", ":", "echo", ":::", "x"],
        ["parallel", "-S", "16/:", "echo", ":::", "x"],
        ["parallel", "-S", "@group1", "echo", ":::", "x"],
    ],
)
def test_plain_sshlogins_keep_the_command_known(words):
    assert command_words(words, 0) == (3 if words[1] == "-S" else 2, len(words) - 2)


@pytest.mark.parametrize(
    "command",
    ["parallel -S host echo ::: x", "parallel -S user@host:22,: -j2 echo {} ::: x"],
)
async def test_plain_sshlogins_are_still_allowed(judge, command):
    await allowed(judge, DENY_RM, command)
    await allowed(judge, READ_DENIED, command)


@pytest.mark.parametrize(
    "command", ["parallel -S host rm {} ::: y", "parallel -S user@host:22 rm ::: y"]
)
async def test_b49_what_runs_behind_a_plain_sshlogin_is_still_checked(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")
    await refused(judge, DENY_RM, command)


# -- 3: the other remote options are not read here -------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "parallel --sshloginfile .env echo ::: x", "parallel --slf hosts echo ::: x",
        "parallel -M -S host echo ::: x", "parallel --controlmaster -S host echo ::: x",
        "parallel --transfer -S host echo ::: x", "parallel --tf .env -S host echo ::: x",
        "parallel --return out -S host echo ::: x", "parallel --cleanup -S h echo ::: x",
        "parallel --trc out -S host echo ::: x", "parallel --bf .env -S host echo ::: x",
        "parallel --basefile .env -S host echo ::: x", "parallel --nonall -S h 'rm y'",
        "parallel --onall -S host ::: 'rm y'", "parallel --filter-hosts -S h echo ::: x",
        "parallel --ssh-delay 1 -S host echo ::: x", "parallel --sshdelay 1 echo ::: x",
    ],
)  # fmt: skip
async def test_b49_remote_options_make_the_command_anything(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")
    await refused(judge, BYPASS_ENV, command, mode="bypass")
    await refused(judge, READ_DENIED, command)


# -- 4: environment variables parallel reads --------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "PARALLEL=\"--ssh 'rm y;' -S host\" parallel echo ::: x",
        "env PARALLEL='-S rm\\ y\\;\\ true' parallel echo ::: x",
        "PARALLEL_SSH='rm y;' parallel -S host echo ::: x",
        "PARALLEL_SHELL=./evil parallel echo ::: x",
        "export PARALLEL_SHELL=./evil; parallel echo ::: x",
        "PARALLEL_HOME=. parallel echo ::: x", "HOME=. parallel echo ::: x",
        "XDG_CONFIG_HOME=. parallel echo ::: x", "PARALLEL_CSH='--ssh rm' sem echo",
    ],
)  # fmt: skip
async def test_b49_variables_parallel_reads_make_the_command_anything(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")
    await refused(judge, DENY_RM, command)


@pytest.mark.parametrize(
    "command", ["parallel echo ::: x", "PARALLEL_FOO=1 parallel echo ::: x", "HOME=. echo x"]
)
async def test_parallel_without_those_variables_is_still_allowed(judge, command):
    await allowed(judge, DENY_RM, command)


# -- 5: {= perl =} replacement strings run Perl here -----------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "parallel echo '{= qx(rm y) =}' ::: x", "parallel echo {= qx{rm y} =} ::: x",
        "parallel --tagstring '{= qx(rm y) =}' echo ::: x",
        "parallel --results '{= qx(rm y) =}' echo ::: x",
        "parallel --wd '{= qx(rm y) =}' echo ::: x", "parallel --wd='{=qx(rm y)=}' echo ::: x",
        "parallel echo 'a{=qx(rm y)=}b' ::: x", "sem echo '{= qx(rm y) =}'",
    ],
)  # fmt: skip
async def test_b49_parallel_perl_replacement_strings(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")
    judged = await judge(
        {"allow": ["bash(parallel *)", "bash(sem *)"]}, "bash", {"command": command}
    )
    assert judged.decision == "ask", judged.event["reason"]


# -- 6: plain sshlogins holding a / as a word of their own -----------------------------


@pytest.mark.parametrize(
    "command",
    [
        "parallel -S 8/host echo ::: x", "parallel -S @g/host echo ::: x",
        "parallel --sshlogin 2/user@host:22 echo ::: x", "sem -S 4/host echo",
    ],
)  # fmt: skip
async def test_plain_sshlogin_with_a_slash_is_allowed(judge, command):
    await allowed(judge, DENY_RM, command)
