"""dsh.yml errors found by a hand mutation review of the config modules: reading and
YAML problems, which problem is reported, and where (file, line, column, key path)."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Literal

import pytest
from config_support import SETTINGS, fails, write
from pydantic import BaseModel, ConfigDict, ValidationError

from dsh import ConfigError
from dsh.config import find_config, load_config


@pytest.mark.parametrize(
    ("text", "kind"),
    [("hello", "a string"), ("3", "a number"), ("1.5", "a number"), ("yes", "true (a boolean)")],
)
def test_a_top_level_scalar_is_named_in_yaml_s_words(tmp_path: Path, text: str, kind: str) -> None:
    """Not Python's type name ("not a int", "not a str"), as docs/config.md promises."""
    err = fails(write(tmp_path, text + "\n"))
    assert err.reason == f"the file must hold a mapping of keys, not {kind}"


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ("2024-01-01", "a date"),
        ("2024-01-01 10:00:00", "a date and time"),
        ("!!binary aGk=", "binary data"),
        ("!!set {a}", "a set"),
    ],
)
def test_other_yaml_kinds_are_named_in_yaml_s_words(tmp_path: Path, value: str, kind: str) -> None:
    err = fails(write(tmp_path, f"models: {value}\n"))
    assert err.reason == f"Input should be a mapping (key: value lines), not {kind}"


def test_a_top_level_list_is_located(tmp_path: Path) -> None:
    path = write(tmp_path, "# settings\n\n- a\n- b\n")
    err = fails(path)
    assert err.source == f"{path}:3:1"  # where the list starts, not the top of the file
    assert err.reason == "the file must hold a mapping of keys, not a list"


def test_both_config_files_name_the_one_found_first_and_the_other(tmp_path: Path) -> None:
    (tmp_path / "dsh.yml").write_text("")
    (tmp_path / "dsh.yaml").write_text("")
    with pytest.raises(ConfigError) as info:
        find_config(tmp_path, env={})
    assert info.value.source == str(tmp_path / "dsh.yml")
    assert info.value.reason == f"dsh.yaml also exists in {tmp_path}; keep one of the two"


def test_a_file_that_is_not_utf8_names_the_byte(tmp_path: Path) -> None:
    path = tmp_path / "dsh.yml"
    path.write_bytes(b'models:\n  m: {provider: "\xff"}\n')
    err = fails(path)
    assert (err.source, err.path) == (f"{path}:2:18", "")  # the line and column too
    assert err.reason == "not UTF-8 text: invalid start byte at byte 25"


def test_a_file_with_a_byte_order_mark_that_is_not_utf8_names_the_files_byte(
    tmp_path: Path,
) -> None:
    # the mark is not text, but it is the file's: bytes and columns count as an editor does
    path = tmp_path / "dsh.yml"
    path.write_bytes(b"\xef\xbb\xbfmodel: caf\xc3\xa9\r\nagents: [\xe9]\n")
    err = fails(path)
    assert (err.source, err.reason) == (
        f"{path}:2:10",
        "not UTF-8 text: invalid continuation byte at byte 26",
    )


def test_a_path_that_cannot_be_read_says_why(tmp_path: Path) -> None:
    err = fails(tmp_path)  # a directory
    assert (err.source, err.path) == (str(tmp_path), "")
    assert err.reason == f"cannot read: {os.strerror(errno.EISDIR)}"


def test_a_yaml_error_names_where_the_unclosed_construct_began(tmp_path: Path) -> None:
    path = write(tmp_path, "models: {a: {provider: x}\n")
    err = fails(path)
    assert err.source == f"{path}:2:1"
    assert err.reason.startswith("invalid YAML: while parsing a flow mapping at line 1, column 9")


def test_a_character_yaml_refuses_is_located_by_characters_not_bytes(tmp_path: Path) -> None:
    path = write(tmp_path, "agents:\n  - id: é\x07\n")
    err = fails(path)
    assert err.source == f"{path}:2:10"  # é is two bytes but one column
    assert err.reason.startswith("invalid YAML: character #x0007 is not allowed (")
    assert err.path == ""


def test_a_duplicate_key_inside_an_inline_merge_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "models:\n  <<: {a: {provider: x}, a: {provider: y}}\n")
    err = fails(path)
    assert (err.source, err.path) == (f"{path}:2:26", "models.a")
    assert err.reason == "duplicate key (first on line 2)"


def test_a_complex_key_is_named_as_a_list(tmp_path: Path) -> None:
    err = fails(write(tmp_path, "? [a, b]\n: 1\n"))
    assert err.path == '["?"]'
    assert err.reason == "keys must be strings, this one is read as a list; quote it"


def test_of_two_problems_on_one_line_the_first_column_is_reported(tmp_path: Path) -> None:
    # pydantic reports timeout first (field order); the file has max_retries first
    path = write(tmp_path, "models: {a: {provider: x, max_retries: -1, timeout: 0}}\n")
    err = fails(path)
    assert (err.source, err.path) == (f"{path}:1:27", "models.a.max_retries")


def test_the_checks_across_the_file_are_reported_with_the_others(tmp_path: Path) -> None:
    # every problem, in file order: the unknown model comes first although the bad value
    # is found by an earlier check
    path = write(tmp_path, "model: nosuch\npermissions: {mode: sometimes}\n")
    err = fails(path)
    assert [(p.source, p.path) for p in err.problems] == [
        (f"{path}:1:1", "model"),
        (f"{path}:2:15", "permissions.mode"),
    ]
    assert str(err) == err.problem + " (1 more problem in the file)"
    path = write(tmp_path, "model: nosuch\nagents:\n  - id: a\n    options: {max_steps: 0}\n")
    assert [p.path for p in fails(path).problems] == ["model", "agents[0].options.max_steps"]


def test_a_reference_to_a_bad_model_entry_is_not_a_second_problem(tmp_path: Path) -> None:
    path = write(tmp_path, "model: m\nmodels:\n  m: {provider: x, timeout: 0}\n")
    err = fails(path)
    assert [p.path for p in err.problems] == ["models.m.timeout"]
    assert str(err) == err.problem
    path = write(tmp_path, "model: nosuch\nmodels:\n  m: {provider: x, timeout: 0}\n")
    assert [p.path for p in fails(path).problems] == ["model", "models.m.timeout"]
    path = write(tmp_path, "model: nosuch\nmodels: [a, b]\n")  # no entry can be told apart
    assert [p.path for p in fails(path).problems] == ["models"]


def test_every_problem_is_told_in_one_run_past_a_bad_core_entry(tmp_path: Path) -> None:
    # the good part of a bad `models:`/`agents:` is checked on: agent options and the
    # model names they use, at their places in the file
    path = write(
        tmp_path,
        "models:\n"
        "  fast: {provider: x, timeout: 0}\n"
        "  smart: {provider: x}\n"
        "agents:\n"
        "  - id: a\n"
        "    max_steps: many\n"
        "  - id: b\n"
        "    model: smrt\n"
        "    options: {max_token: 5}\n"
        "  - id: c\n"
        "    model: fast\n",
    )
    problems = fails(path).problems
    assert [p.path for p in problems] == [
        "models.fast.timeout",
        "agents[0].max_steps",
        "agents[1].model",
        "agents[1].options.max_token",
    ]
    assert "unknown model 'smrt'" in problems[2].reason and "'smart'" in problems[2].reason
    assert "max_tokens" in problems[3].reason


def test_a_core_key_error_keeps_the_validation_error_as_its_cause(tmp_path: Path) -> None:
    # the core's models hide their input, so the cause can be shown (dsh -v)
    err = fails(write(tmp_path, "models:\n  fast: {provider: x, timeout: 0}\n"))
    assert isinstance(err.__cause__, ValidationError)
    err = fails(write(tmp_path, "models:\n  fast: {provider: x, api_key: sk-live-SECRET}\n"))
    assert isinstance(err.__cause__, ValidationError)
    assert "SECRET" not in str(err.__cause__)


def test_a_model_name_with_dashes_is_a_plain_path_part(tmp_path: Path) -> None:
    err = fails(write(tmp_path, "models:\n  claude-sonnet: {provider: x, timeout: 0}\n"))
    assert err.path == "models.claude-sonnet.timeout"


def test_where_falls_back_to_the_deepest_part_the_file_has(tmp_path: Path) -> None:
    path = write(tmp_path, "models:\n  fast: {provider: x}\nagents:\n  - id: a\n")
    config = load_config(path)
    assert config.where("agents", 0, "id") == f"{path}:4:5"
    assert config.where("agents", 5, "model") == f"{path}:3:1"  # no sixth agent
    assert config.where("models", "slow") == f"{path}:1:1"
    assert load_config().where("models") == "<defaults>"  # no file, no line


class Wide(BaseModel):
    model_config = ConfigDict(extra="forbid")
    a: int


class Tall(BaseModel):
    model_config = ConfigDict(extra="forbid")
    b: int = 0


class Named(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str


class Shape(BaseModel):
    model_config = ConfigDict(extra="forbid")
    target: Wide | Tall | None = None
    either: Wide | Named | None = None
    limit: int | Literal["auto"] = "auto"


@pytest.mark.parametrize(
    ("text", "where", "path"),
    [
        ("shape:\n  limit: lots\n", "2:3", "shape.limit"),
        ("shape:\n  target: {a: x}\n", "2:12", "shape.target.a"),
        ("shape:\n  either: {}\n", "2:3", "shape.either.a"),
    ],
)
def test_union_members_are_left_out_of_the_path(
    tmp_path: Path, text: str, where: str, path: str
) -> None:
    """pydantic's loc names the union member (``target.Wide.a``, ``limit.int``); the
    error names the keys of the file, and points at the deepest one it has."""
    file = write(tmp_path, text)
    err = fails(file, {"shape": Shape})
    assert (err.source, err.path) == (f"{file}:{where}", path)


def values_text(padding: int) -> str:
    """A document of 99,006 values plus ``padding``: the root, three keys, three lists,
    999 scalars under the anchor and 98 aliases of its 1,000 values."""
    zeros = ", ".join(["0"] * 999)
    aliases = ", ".join(["*a"] * 98)
    extra = ", ".join(["0"] * padding)
    return f"x: &a [{zeros}]\ny: [{aliases}]\nz: [{extra}]\n"


def test_the_alias_limit_is_100000_values_counting_keys() -> None:
    unchecked = {"x", "y", "z"}.__contains__  # plugins turned off: only the size counts
    config = load_config(text=values_text(994), blocked=unchecked)
    assert len(config.raw["y"]) == 98
    with pytest.raises(ConfigError, match="expand it to more than 100,000 values"):
        load_config(text=values_text(995), blocked=unchecked)


def test_a_value_that_contains_itself_is_refused_where_its_anchor_is() -> None:
    with pytest.raises(ConfigError) as info:
        load_config(text="loop: &a [*a]\n", settings=SETTINGS)
    assert str(info.value) == (
        "<string>:1:7: this value contains itself (an alias inside its own anchor); "
        "a config value cannot be recursive"
    )


async def test_a_recursive_alias_in_agent_options_is_refused_at_load() -> None:
    from dsh.testing import ScriptedModel, scripted_harness

    text = "model: scripted\nmodels:\n  scripted: {provider: scripted}\n"
    text += "agents:\n  - id: a\n    options: {x: &a [*a]}\n"
    with pytest.raises(ConfigError) as info:
        async with scripted_harness(ScriptedModel([]), config_text=text, load_entry_points=False):
            pass
    assert info.value.source.startswith("<string>:6:")


@pytest.mark.parametrize("value", ["2001-13-45", "!!int abc"])
def test_a_value_yaml_cannot_construct_is_a_located_config_error(
    tmp_path: Path, value: str
) -> None:
    path = write(tmp_path, f"agents:\n  - id: a\n    options: {{since: {value}}}\n")
    err = fails(path)
    assert (err.source, err.path) == (f"{path}:3:22", "agents[0].options.since")
    assert err.reason.startswith(f"invalid YAML: {value.split()[-1]!r} cannot be read as ")


def test_a_bad_section_is_reported_once_not_again_under_each_agent(tmp_path: Path) -> None:
    # the agent's own settings are fine; they used to be checked over the bad section
    path = write(
        tmp_path,
        """\
        permissions:
          mode: yolo
        agents:
          - id: main
            options:
              permissions:
                allow: ["bash(ls*)"]
          - id: other
            options:
              permissions:
                mode: nope
        """,
    )
    error = fails(path)
    assert [p.path for p in error.problems] == [
        "permissions.mode",
        "agents[1].options.permissions.mode",
    ]


class Rules(BaseModel):
    deny: tuple[str, ...] = ()
    tags: set[str] = set()


LIST = "a list ([a, b], or one '- item' per line)"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("rules: {deny: 'bash(rm *)'}", f"{LIST}, not a string"),
        ("rules: {tags: 3}", f"{LIST}, not a number"),
        ("permissions: {allow: {bash: 1}}", f"{LIST}, not a mapping"),
        ("models: {fast: [1]}", "a mapping (key: value lines), not a list"),
        ("models: {fast: true}", "a mapping (key: value lines), not true (a boolean)"),
        ("agents: {id: a}", f"{LIST}, not a mapping"),
        ("models: {fast: null}", "a mapping (key: value lines), not null"),
        ("compaction: 3", "a mapping (key: value lines), not a number"),
    ],
)
def test_a_value_of_the_wrong_kind_is_named_in_yamls_words(
    tmp_path: Path, text: str, reason: str
) -> None:
    # not "Input should be a valid tuple"; the value itself is never shown (a secret)
    error = fails(write(tmp_path, text + "\n"), {**SETTINGS, "rules": Rules})
    assert error.reason == f"Input should be {reason}"


def test_a_misspelt_choice_gets_the_choice_it_was_meant_to_be(tmp_path: Path) -> None:
    path = write(tmp_path, "agents:\n  - id: a\n    queue_mode: one-at-a-tim\n")
    (problem,) = fails(path).problems
    assert problem.reason == (
        "Input should be 'batch' or 'one-at-a-time'; did you mean 'one-at-a-time'?"
    )
    path = write(tmp_path, "agents:\n  - id: a\n    queue_mode: fifo\n")
    assert fails(path).problems[0].reason == "Input should be 'batch' or 'one-at-a-time'"


def test_a_misspelt_queue_mode_under_options_gets_the_choice_too(tmp_path: Path) -> None:
    # docs/config.md: "A misspelt choice gets the choice it was meant to be"; the same
    # key under an agent's options: is checked by the core's option rules, which said
    # only what the value must be
    text = "agents:\n  - id: a\n    options:\n      queue_mode: one-at-a-tim\n"
    (problem,) = fails(write(tmp_path, text)).problems
    assert problem.path == "agents[0].options.queue_mode"
    assert problem.reason == (
        "option 'queue_mode' must be 'batch' or 'one-at-a-time'; did you mean 'one-at-a-time'?"
    )
    text = "agents:\n  - id: a\n    options:\n      queue_mode: fifo\n"
    assert fails(write(tmp_path, text)).problems[0].reason == (
        "option 'queue_mode' must be 'batch' or 'one-at-a-time'"  # never the value itself
    )


def test_an_agents_options_with_every_line_commented_out_are_none(tmp_path: Path) -> None:
    path = write(tmp_path, "agents:\n  - id: a\n    options:\n    #  max_tokens: 5\n")
    assert load_config(path).agents[0].options == {}


def test_a_string_given_something_else_is_named_in_yamls_words(tmp_path: Path) -> None:
    path = write(tmp_path, "agents:\n  - id: a\n    system_prompt: [be, brief]\n")
    assert fails(path).problems[0].reason == "Input should be a string, not a list"
    path = write(tmp_path, "agents:\n  - id: a\n    system_prompt: 42\n")
    assert fails(path).problems[0].reason == "Input should be a string, not a number"


def test_the_good_keys_of_a_bad_agent_entry_are_checked_in_the_same_run(tmp_path: Path) -> None:
    # an entry with a bad or unknown key is not left out whole: its model, its options
    # and its id are checked with the rest
    path = write(
        tmp_path,
        "models:\n"
        "  sonnet: {provider: x}\n"
        "agents:\n"
        "  - id: a\n"
        "    queue_mode: one-at-a-tim\n"
        "    model: sonet\n"
        "    options: {max_token: 5, queue_mode: batch}\n"
        "    colour: red\n"
        "  - id: a\n"
        "    max_steps: 0\n"
        "  - id: 7\n"
        "    model: nosuch\n",
    )
    problems = fails(path).problems
    assert [p.path for p in problems] == [
        "agents[0].queue_mode",
        "agents[0].model",
        "agents[0].options.max_token",
        "agents[0].options.queue_mode",
        "agents[0].colour",
        "agents[1].id",
        "agents[1].max_steps",
        "agents[2].id",  # a bad id: the entry is left out, its model unchecked
    ]
    assert "unknown model 'sonet'" in problems[1].reason
    assert "set on the agent itself as well" in problems[3].reason
    assert problems[5].reason == "duplicate agent id 'a' (first at agents[0].id)"
