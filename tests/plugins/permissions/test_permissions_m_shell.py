"""The shell splitter and the command parts, pinned where a hand mutation review of
``_shell`` and ``_commands`` found no test. Whatever the splitter cannot model is
asked about, never allowed (behaviour 49: chaining and substitution cannot smuggle a
denied command past a rule)."""

from __future__ import annotations

import pytest

from dsh_permissions._commands import command_subjects
from dsh_permissions._shell import MAX_LENGTH, Unparseable, split

pytestmark = pytest.mark.plugins("permissions")

OPEN = {"allow": ["bash(*)"], "deny": ["bash(rm *)"]}
CAT_ENV = {"allow": ["bash(*)"], "deny": ["bash(cat .env)"]}

#: every end of every range of invisible or bidirectional characters the splitter
#: refuses (docs/permissions.md: "control or invisible characters")
HIDDEN = [
    *("\x01", "\x08", "\x0b", "\x1f", "\x7f", "\x9f", "\u00ad", "\u061c", "\u180e"),
    *("\u200b", "\u200f", "\u2028", "\u202e", "\u2060", "\u2064", "\u2066", "\u206f"),
    *("\ufeff", "\ufff9", "\ufffb"),
]


@pytest.mark.parametrize("char", HIDDEN, ids=lambda c: f"U+{ord(c):04X}")
async def test_every_invisible_or_bidirectional_character_is_asked_about(judge, char):
    """A command holding a character a person cannot see (a right-to-left mark, a
    soft hyphen, a word joiner, ...) is not what the person approving it would read:
    it is never allowed, even by ``allow: bash(*)``."""
    with pytest.raises(Unparseable, match=f"U\\+{ord(char):04X}"):
        split(f"git status{char}")
    judged = await judge(OPEN, "bash", {"command": f"git status{char}"})
    assert judged.decision == "ask", judged.event["reason"]


async def test_the_length_limit_is_exactly_65536_characters(judge):
    """Up to 65,536 characters a command is split; one more and it is asked about."""
    assert MAX_LENGTH == 65536
    longest = "echo " + "a" * (MAX_LENGTH - 5)
    assert len(split(longest)) == 1
    with pytest.raises(Unparseable, match="longer than 65536"):
        split(longest + "a")
    judged = await judge(OPEN, "bash", {"command": longest + "a"})
    assert judged.decision == "ask", judged.event["reason"]


def test_the_parts_limit_is_exactly_256_commands():
    """Up to 256 simple commands a line is split; one more and it is refused."""
    assert len(split("true;" * 256)) == 256
    with pytest.raises(Unparseable, match="more than 256 commands"):
        split("true;" * 257)


def test_nesting_counts_backticks_too():
    """Backticks nest like ``$( )``: 16 levels of ``$( )`` inside a backtick pair are
    17 levels, one more than the splitter models."""
    inner = "$(" * 16 + "true" + ")" * 16
    assert split("echo " + inner)  # 16 levels: fine
    with pytest.raises(Unparseable, match="nested more than 16"):
        split("echo " + "$(" * 17 + "true" + ")" * 17)
    with pytest.raises(Unparseable, match="nested more than 16"):
        split(f"echo `{inner}`")


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("\\if x", ["if", "x"]),  # a quoted keyword is a plain command name
        ("'if' x", ["if", "x"]),
        ("git status !", ["git", "status", "!"]),  # only a leading ! negates
        ("echo a\\", ["echo", "a\\"]),  # a backslash at the very end stays
        ('echo "\\`x\\`"', ["echo", "`x`"]),  # an escaped backtick in "..." is text
    ],
)
def test_quoting_leaves_the_words_a_program_receives(line, words):
    """Each word's text is what the program receives: a quoted keyword is a command
    name, ``!`` is special only before a command, a final backslash and an escaped
    backtick are literal characters."""
    assert [[w.text for w in c.words] for c in split(line)] == [words]


async def test_a_word_after_a_leading_negation_is_still_ruled(judge):
    """``!`` anywhere but before the command is an argument: ``git status !`` is not
    the ``git status`` an exact allow rule names."""
    judged = await judge({"allow": ["bash(git status)"]}, "bash", {"command": "git status !"})
    assert judged.decision == "ask", judged.event["reason"]


@pytest.mark.parametrize(
    ("rules", "command", "expected"),
    [
        # coproc runs its command: the line is not modelled, so it is asked about
        (OPEN, "coproc rm -rf /", "ask"),
        # a line continuation between words is blank, not an empty word
        ({"allow": ["bash(*)"], "deny": ["bash(rm -rf *)"]}, "rm \\\n -rf /", "deny"),
        # {a..b} is brace expansion: only the shell knows the words
        ({"allow": ["bash(*)"], "deny": ["bash(cat .env)"]}, "cat .en{v..v}", "ask"),
        # a file named by digits is a file: only >& 1 duplicates a descriptor
        ({"allow": ["bash(echo *)"]}, "echo x > 1", "ask"),
        ({"allow": ["bash(echo *)"]}, "echo x 2> 2", "ask"),
        # >| (clobber) writes the file like >
        ({"allow": ["bash(*)"], "deny": ["bash(> /etc/*)"]}, "echo x >| /etc/passwd", "deny"),
        # $'...' ends at its first unescaped quote: what follows runs
        (OPEN, "echo $'\\''; rm -rf /; echo \\'", "deny"),
        # $"..." is a double-quoted string: its text and its expansions count
        (OPEN, '$"rm" -rf /', "deny"),
        ({"allow": ["bash(*)"]}, 'cat $"$F"', "ask"),
        # $_NAME and $! are parameters: only the shell knows their values
        ({"allow": ["bash(*)"]}, "cat $_secret", "ask"),
        ({"allow": ["bash(*)"]}, "kill $!", "ask"),
        # a process substitution used as a word is only known when the shell runs
        ({"allow": ["bash(cat *)", "bash(ls*)"]}, "cat <(ls)", "ask"),
    ],
)
async def test_commands_the_splitter_reads_strictly(judge, rules, command, expected):
    """B49: shell syntax cannot smuggle a command or a redirection past a rule."""
    judged = await judge(rules, "bash", {"command": command})
    assert judged.decision == expected, judged.event["reason"]


#: docs/permissions.md: the wrappers whose command is opened up (and the rest of the
#: list the plugin knows), each as it would stand before a command
WRAPPED = [
    *("sudo", "env", "timeout 5", "nice", "nohup", "time", "command", "exec", "xargs"),
    *("stdbuf -oL", "setsid", "builtin", "caffeinate", "chrt 1", "doas", "ionice"),
    *("strace", "taskset 1", "unbuffer", "watch"),
]


@pytest.mark.parametrize("wrapper", WRAPPED)
async def test_a_deny_rule_sees_the_command_behind_every_wrapper(judge, wrapper):
    """B49: ``setsid rm -rf /`` is ``rm -rf /`` to ``deny: bash(rm *)``."""
    judged = await judge(OPEN, "bash", {"command": f"{wrapper} rm -rf /"})
    assert judged.decision == "deny", judged.event["reason"]


@pytest.mark.parametrize("shell", ["ash", "bash", "busybox sh", "dash", "fish", "ksh", "mksh"])
async def test_the_script_of_every_shell_is_opened(judge, shell):
    """``<shell> -c SCRIPT`` runs SCRIPT, whichever shell it is."""
    judged = await judge(OPEN, "bash", {"command": f"{shell} -c 'true; rm -rf /'"})
    assert judged.decision == "deny", judged.event["reason"]


@pytest.mark.parametrize(
    ("rules", "command", "expected"),
    [
        # popd changes the directory too: later relative paths are unknown
        ({"allow": ["bash(popd*)", "bash(cat src/*)"]}, "popd && cat src/a.py", "ask"),
        # a cd stays in force for the rest of the line, however it is spelled or
        # wrapped, and is followed: ../.env from src is the workspace's .env
        (CAT_ENV, "cd src; true; cat ../.env", "deny"),
        (CAT_ENV, "'cd' src && cat ../.env", "deny"),
        (CAT_ENV, "command -p cd src && cat ../.env", "deny"),
        # an input redirection's file is canonical like any path in the text
        ({"allow": ["bash(*)"], "deny": ["bash(cat < .env)"]}, "cat < src/../.env", "deny"),
        # a descriptor duplication is not a part, nor text of the command
        ({"allow": ["bash(git status)"]}, "git status 2>&1", "allow"),
        # find -exec runs every word up to ; or +, {} included
        (
            {"allow": ["bash(*)"], "deny": ["bash(cp * /etc/*)"]},
            "find . -exec cp {} /etc/x ;",
            "deny",
        ),
        (OPEN, "find . -exec rm ;", "deny"),
        # after a cd an absolute path still names what it names
        ({"allow": ["bash(cd *)", "bash(cat /etc/*)"]}, "cd src && cat /etc/hostname", "allow"),
        # the -c script is the one word after -c; the words after it are its $0, $1
        ({"allow": ["bash(bash -c *)", "bash(git status)"]}, "bash -c 'git status' x", "allow"),
        # a path under ~ that holds an expansion is only known when the shell runs
        ({"allow": ["bash(cat *)"]}, "cat ~/$F", "ask"),
        # a redirection's target is folded like a command's text
        ({"allow": ["bash(*)"], "deny": ["bash(> /etc/*)"]}, "echo x > /\uff45tc/passwd", "deny"),
        # only /dev/null, /dev/stdout and /dev/stderr are not parts
        ({"allow": ["bash(echo *)"]}, "echo x > /dev/tty", "ask"),
        # a lower-case assignment is an assignment too
        (OPEN, "x=1 rm -rf /", "deny"),
        # a wrapper's NAME=value and duration arguments are not the wrapped command
        ({"allow": ["bash(env *)", "bash(make*)"]}, "env FOO=1 make", "allow"),
        ({"allow": ["bash(timeout *)", "bash(make*)"]}, "timeout 5 make", "allow"),
        ({"allow": ["bash(timeout *)", "bash(make*)"]}, "timeout 1.5m make", "allow"),
        ({"allow": ["bash(nice *)", "bash(make*)"]}, "nice -5 make", "allow"),
        # -c anywhere in a cluster of short options is -c
        (OPEN, "bash -ce 'true; rm -rf /'", "deny"),
        # every find action that runs a command
        (OPEN, "find . -ok rm -rf {} ;", "deny"),
        (OPEN, "find . -okdir rm -rf {} ;", "deny"),
    ],
)
async def test_what_a_command_runs_in_turn(judge, rules, command, expected):
    """The parts behind wrappers, assignments and directory changes."""
    judged = await judge(rules, "bash", {"command": command})
    assert judged.decision == expected, judged.event["reason"]


@pytest.mark.parametrize("word", ["-I./inc//x", "--out=./a//b", "https://host//x", "a=./b//c"])
def test_options_assignments_and_urls_are_not_paths(layout, word):
    """Only words that look like paths are canonicalised: an option, a ``k=v`` word
    or a URL holding a ``/`` is matched as written."""
    (subject,) = command_subjects(f"tool {word}", str(layout.ws))
    assert subject.value == f"tool {word}"


async def test_bypass_denies_a_redirection_only_the_shell_can_resolve(judge):
    """Bypass asks nobody: a redirection to ``$F`` cannot be checked against the deny
    rule ``> /etc/*``, so it does not run (docs/permissions.md, Modes)."""
    rules = {"deny": ["bash(> /etc/*)"]}
    judged = await judge(rules, "bash", {"command": "echo x > $F"}, mode="bypass")
    assert judged.decision == "deny", judged.event["reason"]
