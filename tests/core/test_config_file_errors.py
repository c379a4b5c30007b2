"""dsh.yml errors name the file, line and path: unknown keys, bad values, missing fields,
YAML syntax, undefined models, duplicates, merge keys, aliases, keys that are not strings.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from config_support import SETTINGS, fails, write

from dsh.config import load_config


@pytest.mark.parametrize(
    ("text", "path", "line", "hint"),
    [
        (
            "models:\n  fast:\n    provider: x\n    timout: 3\n",
            "models.fast.timout",
            4,
            "did you mean 'timeout'?",
        ),
        (
            "agents:\n  - id: a\n  - id: b\n    sytem_prompt: hi\n",
            "agents[1].sytem_prompt",
            4,
            "did you mean 'system_prompt'?",
        ),
        (  # not max_tokens_field, the body's key: the cap itself
            "models:\n  gw:\n    provider: x\n    max_tokens: 100\n",
            "models.gw.max_tokens",
            4,
            "; the cap on each answer of this model is max_output_tokens (an agent's own "
            "cap is the max_tokens of its options)",
        ),
        (
            "models:\n  gw:\n    provider: x\n    max_completion_tokens: 100\n",
            "models.gw.max_completion_tokens",
            4,
            "; the cap on each answer of this model is max_output_tokens (an agent's own "
            "cap is the max_tokens of its options)",
        ),
        (  # an option the entry does not take itself
            "agents:\n  - id: a\n    max_tokens: 100\n",
            "agents[0].max_tokens",
            3,
            "; max_tokens is an agent option: it goes under the entry's options "
            "(options: {max_tokens: ...})",
        ),
    ],
)
def test_unknown_key_in_models_and_agents(
    tmp_path: Path, text: str, path: str, line: int, hint: str
) -> None:
    file = write(tmp_path, text)
    err = fails(file)
    assert err.path == path
    assert err.source == f"{file}:{line}:5"
    assert err.reason.startswith("unknown key (expected one of: ")
    assert err.reason.endswith(hint)


def test_bad_value_names_path_and_line(tmp_path: Path) -> None:
    file = write(tmp_path, "models:\n  gpt-4.1:\n    provider: openai\n    timeout: 0\n")
    err = fails(file)
    assert (err.source, err.path) == (f"{file}:4:5", 'models["gpt-4.1"].timeout')
    assert err.reason == "Input should be greater than 0"


def test_missing_field_points_at_its_parent(tmp_path: Path) -> None:
    file = write(tmp_path, "models:\n  fast:\n    timeout: 3\n")
    err = fails(file)
    assert (err.source, err.path, err.reason) == (
        f"{file}:2:3",
        "models.fast.provider",
        "Field required",
    )


def test_first_problem_in_the_file_is_reported(tmp_path: Path) -> None:
    file = write(tmp_path, "agents:\n  - id: 5\nmodels:\n  fast: {provider: x, timeout: -1}\n")
    err = fails(file)
    assert (err.source, err.path) == (f"{file}:2:5", "agents[0].id")


def test_yaml_syntax_error_has_line_and_column(tmp_path: Path) -> None:
    file = write(tmp_path, "models:\n  fast:\n    provider: x\n   timeout: 3\n")
    err = fails(file)
    assert err.source == f"{file}:4:4"
    assert err.path == ""
    assert err.reason.startswith("invalid YAML: ")
    assert isinstance(err.__cause__, yaml.YAMLError)


@pytest.mark.parametrize(
    ("text", "at"),
    [("models:\n\tfast:\n", "2:1"), ("models:\n  fast:\n  \tprovider: x\n", "3:3")],
)
def test_a_tab_that_yaml_cannot_read_is_named(tmp_path: Path, text: str, at: str) -> None:
    """ "found character that cannot start any token" alone did not say it was a tab."""
    file = write(tmp_path, text)
    err = fails(file)
    assert err.source == f"{file}:{at}"
    assert err.reason.endswith("(a tab: YAML indents with spaces only)"), err.reason


def test_a_yaml_error_at_the_end_of_the_text_has_no_tab_note(tmp_path: Path) -> None:
    err = fails(write(tmp_path, "models: [fast"))
    assert err.reason.startswith("invalid YAML: ") and "tab" not in err.reason


def test_agent_referencing_unknown_model(tmp_path: Path) -> None:
    file = write(tmp_path, "models:\n  fast: {provider: x}\nagents:\n  - id: a\n    model: fats\n")
    err = fails(file)
    assert (err.source, err.path) == (f"{file}:5:5", "agents[0].model")
    assert err.reason == (
        "unknown model 'fats' (models defined: fast; local is built in); did you mean 'fast'?"
    )


def test_default_model_must_be_defined(tmp_path: Path) -> None:
    file = write(tmp_path, "model: big\n")
    err = fails(file)
    assert (err.source, err.path) == (f"{file}:1:1", "model")
    assert err.reason == "unknown model 'big' (models defined: none; local is built in)"


def test_duplicate_agent_id_names_the_second(tmp_path: Path) -> None:
    file = write(tmp_path, "agents:\n  - id: a\n  - id: b\n  - id: a\n")
    err = fails(file)
    assert (err.source, err.path) == (f"{file}:4:5", "agents[2].id")
    assert err.reason == "duplicate agent id 'a' (first at agents[0].id)"


def test_duplicate_yaml_key_is_not_silently_dropped(tmp_path: Path) -> None:
    file = write(tmp_path, "models:\n  fast: {provider: x}\n  fast: {provider: y}\n")
    err = fails(file)
    assert (err.source, err.path, err.reason) == (
        f"{file}:3:3",
        "models.fast",
        "duplicate key (first on line 2)",
    )


def test_every_duplicate_key_is_found_with_the_other_problems(tmp_path: Path) -> None:
    # docs/config.md: all problems are found; a duplicate key stopped the check at once
    text = "model: local\nmodel: local\nagents:\n  - id: a\n    id: b\n  - id: c\n    model: nope\n"
    file = write(tmp_path, text)
    said = [(p.source, p.path, p.reason) for p in fails(file).problems]
    assert said == [
        (f"{file}:2:1", "model", "duplicate key (first on line 1)"),
        (f"{file}:5:5", "agents[0].id", "duplicate key (first on line 4)"),
        (
            f"{file}:7:5",
            "agents[1].model",
            "unknown model 'nope' (models defined: none; local is built in)",
        ),
    ]


def test_every_key_that_is_no_string_is_found_with_the_duplicates(tmp_path: Path) -> None:
    text = "yes: 1\nmodels:\n  a: {provider: x}\n  a: {provider: x}\n3: c\n"
    file = write(tmp_path, text)
    said = [(p.source, p.path) for p in fails(file).problems]
    assert said == [(f"{file}:1:1", "yes"), (f"{file}:4:3", "models.a"), (f"{file}:5:1", '["3"]')]


def test_merge_keys_are_not_duplicates_and_errors_point_at_the_override(tmp_path: Path) -> None:
    text = "models:\n  a: &base {provider: x, timeout: 2}\n  b:\n    <<: *base\n    timeout: 0\n"
    file = write(tmp_path, text)
    err = fails(file)
    assert (err.source, err.path) == (f"{file}:5:5", "models.b.timeout")
    ok = load_config(write(tmp_path, text.replace("timeout: 0", "timeout: 9"), "ok.yml"))
    assert (ok.models["b"].provider, ok.models["b"].timeout) == ("x", 9.0)


@pytest.mark.parametrize(
    ("text", "path", "kind"),
    [
        ("agents:\n  - id: a\n    options: {yes: 1}\n", "agents[0].options.yes", "a boolean"),
        (
            "models:\n  fast: {provider: x, headers: {1: a}}\n",
            'models.fast.headers["1"]',
            "a number",
        ),
        ("models:\n  ~: {provider: x}\n", 'models["~"]', "null"),
        ("models:\n  2024-01-01: {provider: x}\n", 'models["2024-01-01"]', "a date"),
        # with a time, as its value is named (yaml_kind)
        ("2024-01-01 10:00:00: x\n", '["2024-01-01 10:00:00"]', "a date and time"),
        ("? 2024-1-1 1:00:00Z\n: x\n", '["2024-1-1 1:00:00Z"]', "a date and time"),
        ("!!timestamp 2024-01-01: x\n", '["2024-01-01"]', "a date"),
        ("models:\n  !!binary aGk=: {provider: x}\n", 'models["aGk="]', "binary data"),
        ("models:\n  =: {provider: x}\n", 'models["="]', "YAML's value key (=)"),
    ],
)
def test_keys_must_be_strings(tmp_path: Path, text: str, path: str, kind: str) -> None:
    err = fails(write(tmp_path, text))
    assert err.path == path
    assert err.reason == f"keys must be strings, this one is read as {kind}; quote it"


@pytest.mark.parametrize(
    ("stamp", "kind"),
    [
        ("2024-01-01", "a date"),
        ("2024-01-01 10:00:00", "a date and time"),
        ("2024-01-01T10:00:00Z", "a date and time"),
    ],
)
def test_a_timestamp_is_named_alike_as_a_key_and_as_a_value(
    tmp_path: Path, stamp: str, kind: str
) -> None:
    key = fails(write(tmp_path, f"models:\n  {stamp}: {{provider: x}}\n"))
    assert (key.path, key.reason) == (
        f'models["{stamp}"]',
        f"keys must be strings, this one is read as {kind}; quote it",
    )
    value = fails(write(tmp_path, f"model: {stamp}\n"))
    assert (value.path, value.reason) == ("model", f"Input should be a string, not {kind}")


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("2001-13-45", "'2001-13-45' cannot be read as a date (month must be in 1..12)"),
        (
            "2024-01-01 25:00:00",
            "'2024-01-01 25:00:00' cannot be read as a date and time (hour must be in 0..23)",
        ),
        ("!!timestamp soon", "'soon' cannot be read as a date and time"),
        ("!!int abc", "'abc' cannot be read as a number (invalid literal for int() "),
        ("!!bool maybe", "'maybe' cannot be read as a boolean"),
    ],
)
def test_a_value_yaml_cannot_read_names_its_kind(tmp_path: Path, value: str, reason: str) -> None:
    """In the words a value of that kind is named by (yaml_kind), not YAML's tag; a tag
    whose reader fails other than with ValueError is no traceback."""
    err = fails(write(tmp_path, f"model: {value}\n"))
    assert (err.path, err.reason.partition("invalid YAML: ")[2][: len(reason)]) == (
        "model",
        reason,
    )


def test_top_level_must_be_a_mapping(tmp_path: Path) -> None:
    err = fails(write(tmp_path, "- a\n- b\n"))
    assert err.reason == "the file must hold a mapping of keys, not a list"


def test_aliases_that_expand_past_the_limit_are_refused_quickly(tmp_path: Path) -> None:
    lines = ['l0: &l0 ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    for level in range(1, 9):  # 10**9 values once expanded, a dozen lines of text
        lines.append(f"l{level}: &l{level} [" + ", ".join([f"*l{level - 1}"] * 10) + "]")
    lines += ["agents:", "  - id: main", "    options: {x: *l8}"]
    path = write(tmp_path, "\n".join(lines) + "\n")

    err = fails(path)

    assert str(err).startswith(f"{path}:1:1: ")
    assert "aliases expand it to more than 100,000 values" in str(err)


def test_aliases_within_the_limit_load(tmp_path: Path) -> None:
    text = "agents:\n  - id: a\n    options: &o {x: [1, 2, 3]}\n  - id: b\n    options: *o\n"
    config = load_config(write(tmp_path, text), settings=SETTINGS)
    assert [a.options for a in config.agents] == [{"x": [1, 2, 3]}] * 2


def test_a_key_that_is_not_ascii_is_shown_as_written(tmp_path: Path) -> None:
    err = fails(write(tmp_path, "permissions:\n  tïmeout: 3\n"))
    assert err.path == 'permissions["tïmeout"]'
