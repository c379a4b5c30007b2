"""The ``register_secrets`` hook: a plugin's secret variables are left out of the real
``bash`` tool's commands, their values (or the parts a plugin's ``values`` function
finds) are hidden in tool results and log records, and a plugin that registers
something wrong, or fails, stops start-up with an error naming it and not the value."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest
from loop_support import turn_events

from dsh import get_logger, hookimpl
from dsh.errors import DshError, HookError
from dsh.testing import ScriptedModel, scripted_harness, text, tool_calls

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="bash and /proc")

TOKEN = "tok-3f9a1c7e5b2d8046"  # the whole value is secret
URL = "proto://someone:pw-71c2e9a4d8@db.example:5432/x"  # only the password is
PASSWORD = "pw-71c2e9a4d8"
# What a command sees: its own environment, and the values from elsewhere (dsh's own
# environment in /proc/$PPID/environ, which no scrubbing of bash's environment can hide,
# holds them; that of this test process does not, the test set them later: a file does)
COMMAND = "env; echo ---; cat leak.txt"


def password_of(url: str) -> list[str]:
    return [url.split("://", 1)[1].split("@", 1)[0].partition(":")[2]]


class Secrets:
    def __init__(self, *registrations: tuple[Any, ...], values: Any = None) -> None:
        self.registrations = registrations
        self.values = values

    @hookimpl
    def register_secrets(self, register: Callable[..., None]) -> None:
        for args in self.registrations:
            if len(args) == 2:
                register(args[0], values=args[1])
            else:
                register(*args)


async def bash_output(workspace: Path, *plugins: object, command: str = COMMAND) -> str:
    (workspace / "leak.txt").write_text(f"DSH_TEST_TOKEN={TOKEN}\nDSH_TEST_URL={URL}\n")
    model = ScriptedModel([tool_calls(("bash", {"command": command})), text("ok")])
    events = await turn_events(model, *plugins, workspace=workspace, within=10)
    [result] = [e.data for e in events if e.type == "tool/result"]
    content: str = result["content"]
    return content


@pytest.fixture
def secret_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DSH_TEST_TOKEN", TOKEN)
    monkeypatch.setenv("DSH_TEST_URL", URL)
    monkeypatch.setenv("DSH_TEST_VISIBLE", "still-here")


@pytest.mark.usefixtures("secret_env")
async def test_hook_register_secrets_keeps_the_variables_from_commands(tmp_path: Path) -> None:
    plugin = Secrets(("DSH_TEST_TOKEN",), ("DSH_TEST_URL", password_of))
    output = await bash_output(tmp_path, ("secrets", plugin))
    own, _, dshs = output.partition("---")
    assert "DSH_TEST_VISIBLE=still-here" in own  # the rest of the environment is passed
    assert "DSH_TEST_TOKEN" not in own
    assert "DSH_TEST_URL" not in own
    # printed from elsewhere, the values are hidden, the URL's rest shown
    assert "DSH_TEST_TOKEN=***" in dshs
    assert "DSH_TEST_URL=proto://someone:***@db.example:5432/x" in dshs
    assert TOKEN not in output and PASSWORD not in output


@pytest.mark.usefixtures("secret_env")
async def test_without_the_hook_commands_see_them(tmp_path: Path) -> None:
    output = await bash_output(tmp_path)
    assert f"DSH_TEST_TOKEN={TOKEN}" in output.partition("---")[0]


@pytest.mark.usefixtures("secret_env")
async def test_the_values_are_hidden_in_log_records(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    plugin = Secrets(("DSH_TEST_TOKEN",), ("DSH_TEST_URL", password_of))
    async with scripted_harness(plugins=[plugin], load_entry_points=False, workspace=tmp_path):
        with caplog.at_level(logging.WARNING, logger="dsh.test_secrets"):
            get_logger("dsh.test_secrets").warning("token %s in %s", TOKEN, URL)
    [record] = [r for r in caplog.records if r.name == "dsh.test_secrets"]
    assert record.getMessage() == "token *** in proto://someone:***@db.example:5432/x"


async def test_a_value_from_the_harness_env_is_hidden_too(tmp_path: Path) -> None:
    from dsh.harness import Harness

    plugin = Secrets(("DSH_TEST_ONLY_IN_ENV",))
    env = {"DSH_TEST_ONLY_IN_ENV": "env-secret-0a1b2c3d", "DSH_LOAD_PLUGINS": ""}
    async with Harness(plugins=[plugin], env=env, workspace=tmp_path) as harness:
        assert "env-secret-0a1b2c3d" in harness.secrets()
        assert "DSH_TEST_ONLY_IN_ENV" in harness.hidden_variables()


@pytest.mark.parametrize(
    ("registered", "says"),
    [
        ((42,), "registers a secret variable of type int"),
        (("",), "registers a secret variable ''"),
        (
            ("DSH_TEST_TOKEN=tok-not-shown-0123",),
            "registers a secret variable 'DSH_TEST_TOKEN=...'",
        ),
        (("DSH_TEST_TOKEN", "tok"), "with values=str: expected a function"),
    ],
)
async def test_a_wrong_registration_stops_start_up_naming_the_plugin(
    tmp_path: Path, registered: tuple[Any, ...], says: str
) -> None:
    with pytest.raises(DshError) as caught:
        async with scripted_harness(
            plugins=[("broken", Secrets(registered))], load_entry_points=False
        ):
            pass
    assert "plugin 'broken'" in str(caught.value)
    assert says in str(caught.value)
    assert "not-shown" not in str(caught.value)


def failing(value: str) -> Iterable[str]:
    raise ValueError(f"cannot parse {value}")


@pytest.mark.usefixtures("secret_env")
@pytest.mark.parametrize(
    ("values", "says"),
    [
        (failing, "finding the secrets in $DSH_TEST_TOKEN failed: ValueError: cannot parse ***"),
        (lambda value: value, "failed: TypeError: returned a str, not an iterable of str"),
        (lambda value: [value, 3], "must be str, not int"),
    ],
)
async def test_a_failing_values_function_is_named_without_the_value(
    values: Callable[[str], Any], says: str
) -> None:
    with pytest.raises(DshError) as caught:
        async with scripted_harness(
            plugins=[("broken", Secrets(("DSH_TEST_TOKEN", values)))], load_entry_points=False
        ):
            pass
    assert "plugin 'broken'" in str(caught.value)
    assert says in str(caught.value)
    assert TOKEN not in str(caught.value)
    assert caught.value.__cause__ is None


async def test_a_raising_impl_stops_start_up_naming_plugin_and_hook() -> None:
    class Raising:
        @hookimpl
        def register_secrets(self, register: Callable[..., None]) -> None:
            raise RuntimeError("no secrets today")

    with pytest.raises(HookError) as caught:
        async with scripted_harness(plugins=[("raising", Raising())], load_entry_points=False):
            pass
    assert caught.value.plugin == "raising"
    assert caught.value.hook == "register_secrets"
