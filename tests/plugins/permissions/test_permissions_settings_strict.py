"""The permissions settings are strict, as the compaction and persistence settings are:
``ask_timeout: true`` was taken as 1 s and a quoted ``'5'`` as 5, where those plugins
refuse such values. The rule lists still take a YAML list, and any sequence in code
(dsh_permissions/_settings.py)."""

from __future__ import annotations

import pytest

from dsh import ConfigError
from dsh.config import load_config
from dsh_permissions import PermissionSettings
from dsh_permissions._settings import InvalidSettings, validate_options

pytestmark = pytest.mark.plugins("permissions")

SETTINGS = {"permissions": PermissionSettings}
AS_STRING = "YAML read it as a string"


@pytest.mark.parametrize(
    ("value", "hint"),
    [("true", False), ("yes", False), ("'5'", True), ("1e3", True), ("'300'", True)],
)
def test_an_ask_timeout_that_is_no_number_is_refused(value: str, hint: bool) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(text=f"permissions:\n  ask_timeout: {value}\n", settings=SETTINGS)
    assert str(info.value).startswith(
        "<string>:2:3: permissions.ask_timeout: Input should be a valid number"
    )
    assert (AS_STRING in info.value.reason) == hint


def test_rules_given_in_code_as_bytes_are_refused() -> None:
    with pytest.raises(InvalidSettings, match=r"allow\[0\]: Input should be a valid string"):
        validate_options({"allow": [b"bash"]}, "a")


def test_yaml_lists_and_whole_numbers_still_load() -> None:
    text = (
        "permissions:\n  mode: plan\n  allow: [read]\n  ask:\n    - bash\n"
        "  deny: ['bash(rm *)']\n  ask_timeout: 30\n"
    )
    section = load_config(text=text, settings=SETTINGS).section("permissions")
    assert (section.mode, section.allow, section.ask, section.deny) == (
        "plan",
        ("read",),
        ("bash",),
        ("bash(rm *)",),
    )
    assert section.ask_timeout == 30.0


@pytest.mark.parametrize("rules", [["read"], ("read",), ["read", "bash"]])
def test_options_given_in_code_take_any_sequence(rules: list[str] | tuple[str, ...]) -> None:
    settings = validate_options({"allow": rules, "ask_timeout": 2.5, "mode": "bypass"}, "a")
    assert settings.allow == tuple(rules) and settings.ask_timeout == 2.5
    assert validate_options({"ask_timeout": None}, "a").ask_timeout is None
    assert PermissionSettings(deny=["bash"], ask_timeout=1).deny == ("bash",)
