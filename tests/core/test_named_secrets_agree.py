"""A value is a secret by its key's name by one rule (``dsh._config_secrets.named_secret``)
wherever dsh hides one: ``repr(config)`` (and an agent entry's) and the options stored
with a session agree. A string under a secret's name is hidden at any depth; under a
cookie's name (``cookies``) only one that looks like a credential (``session=...``, a
token): ``cookies: cookies.txt`` names a file, kept in the stored options a resume
rebuilds. A typo of a core option (``max_token``) nested in a plugin's options is hidden
too: it is no typo there, only a secret's name.

Before: the repr hid ``cookies: cookies.txt`` that the session stored in the clear, and
the session stored a nested ``max_token: <token>`` that the repr hid."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import pytest
from pydantic import BaseModel

from dsh import hookimpl
from dsh.config import AgentConfig, load_config
from dsh.testing import ScriptedModel, scripted_harness

TOKEN = "tok-Qw3rTy7uI9oP1aS2dF4gH6jK8"


class _Gateway(BaseModel):
    """A plugin's settings whose secrets are typed ``str``, not ``SecretStr``."""

    cookies: str = ""
    api_key: str = ""
    token: list[str] = []
    max_token: str = ""
    secret: dict[str, str] = {}


class _GatewayPlugin:
    @hookimpl
    def register_settings(self, register: Any) -> None:
        register(_Gateway, section="gateway")


# (key, value, whose: a free option's or the gateway plugin's, hidden?)
CASES = [
    ("cookies", "cookies.txt", "free", False),  # a file's name
    ("cookie_file", "cookies.txt", "free", False),  # no secret's name at all
    ("cookies", f"session={TOKEN}", "gateway", True),  # a cookie's name=value
    ("api_key", TOKEN, "gateway", True),
    ("max_token", TOKEN, "gateway", True),  # a core option's typo, nested: a secret's name
    ("token", [TOKEN, "b"], "gateway", True),  # a list of them: hidden whole
    ("secret", {"x": TOKEN}, "gateway", True),  # a mapping of them: hidden whole
]


@pytest.mark.parametrize(("key", "value", "whose", "hidden"), CASES)
async def test_repr_and_the_stored_session_hide_the_same_values(
    key: str, value: object, whose: str, hidden: bool
) -> None:
    option = {"gw": {"hosts": [{key: value}]}} if whose == "free" else {"gateway": {key: value}}
    text = f"agents:\n  - id: main\n    options: {option!r}\n"
    config = load_config(text=text, settings={"gateway": _Gateway})
    options = config.agents[0].options
    assert options == option  # accepted where options are checked
    plugins: list[Any] = [("gateway", _GatewayPlugin())]
    async with scripted_harness(ScriptedModel([]), plugins=plugins) as harness:
        agent = await harness.agents.create("main", options={"model": "scripted", **options})
        stored = repr(agent.session.meta["options"])
    shown = {"config": repr(config), "agent entry": repr(config.agents[0]), "stored": stored}
    needle = value if isinstance(value, str) else TOKEN
    assert {where: needle not in text for where, text in shown.items()} == dict.fromkeys(
        shown, hidden
    )
    if hidden:
        assert all(f"{key!r}: '***'" in text for text in shown.values())


# an agent's options, each as both ways show and store them
TABLE: list[dict[str, Any]] = [
    {"gw": {"hosts": [{"token": TOKEN}]}},
    {"gw": {"token": [TOKEN, "b"]}, "n": 1},
    {"gw": {"client_secret": {"x": TOKEN}}},
    {"gw": {"password": [[TOKEN]]}},
    {"gw": {"cookies": "cookies.txt", "cookie": ["a.txt"], "cookies2": {"sid": "abc"}}},
    {"auth": {"ttl": 3, "token": TOKEN}},  # a plugin's settings under its name
    {"gw": {"auth": {"ttl": 3}, "cache_key": 3, "token": "", "api_key": []}},
    {"gw": {"tokens": [TOKEN], "token_file": "t.txt"}},  # no secret's names
    {"gw": ({"token": TOKEN}, "x")},
]


@pytest.mark.parametrize("options", TABLE)
def test_the_repr_and_the_stored_options_hide_by_one_walk(options: dict[str, Any]) -> None:
    """The repr's walk and the stored session's are one: neither hides what the other
    shows (they disagreed on cookies, then on lists, once each had its own)."""
    from dsh._config_repr import hidden_options
    from dsh._stored_meta import hidden_meta

    shown = hidden_options(options, (), ())
    stored = hidden_meta("a", {"options": options}, ())["options"]
    assert shown == stored
    assert (TOKEN in repr(shown)) == ("tokens" in options.get("gw", ()))


def test_the_repr_hides_in_any_mapping_and_in_a_value_that_holds_itself() -> None:
    """Options built in code may hold a mapping that is no dict (a ``MappingProxyType``)
    and a list that holds itself: the repr's walk copies every mapping (one left as it
    is was not hidden in) and each container once (a copy that followed the list into
    itself never ended)."""
    looped: list[object] = [{"token": TOKEN}]
    looped.append(looped)
    options = {"gw": MappingProxyType({"token": TOKEN}), "l": looped, "same": [looped]}
    shown = repr(AgentConfig(id="main", options=options))
    assert TOKEN not in shown
    assert "'gw': {'token': '***'}, 'l': [{'token': '***'}, [...]]" in shown
