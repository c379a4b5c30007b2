"""A plugin's failure may quote a secret: a ``HookError`` says it as ``***`` once dsh
holds it (``Harness.add_secrets``, a secret variable, a model API key), in its message
and in ``for_user()`` (what ``dsh`` prints), as the command line and log records did.

Before: the Python API's ``HookError`` (``async with Harness(...)`` raising it from
``harness_started``) quoted the secret whole even after the plugin had added it.

A secret a plugin learns from its settings and adds in its ``harness_started`` is
unknown to dsh until then: a failure of that plugin before the call (reading or checking
its settings) would show it. Declared ``SecretStr`` in the settings model, it is known
once ``dsh.yml`` is validated, before any hook runs (a plain ``str`` cannot be: dsh has
no way to tell it is secret)."""

from __future__ import annotations

import pickle
import sys
from typing import Any

import anyio
import pytest
from pydantic import BaseModel, SecretStr

from dsh import DshError, HookError, hookimpl
from dsh._secrets import redact
from dsh.harness import Harness
from dsh.testing import ScriptedModel, scripted_harness, text, tool_calls
from dsh.tools import tool

SECRET = "tok-HookErr0rSecret-5f1e2d3c4b"


class TokenSettings(BaseModel):
    token: str = ""


class FailsAfterAdding:
    """Adds its settings' token as a secret, then fails quoting it."""

    settings: type[BaseModel] = TokenSettings

    def __init__(self, error: type[Exception]) -> None:
        self.error = error

    @hookimpl
    def register_settings(self, register: Any) -> None:
        register(self.settings)

    @hookimpl
    def harness_started(self, harness: Any) -> None:
        token = harness.config.section("tok").token
        harness.add_secrets([token])
        raise self.error(f"the server refused the token {token}")


async def failure(plugin: object) -> HookError:
    with pytest.raises(HookError) as caught:
        async with Harness(
            plugins=[("tok", plugin)],
            load_entry_points=False,
            config_text=f"tok: {{token: {SECRET}}}\n",
        ):
            pass
    return caught.value


@pytest.mark.parametrize("error", [ValueError, DshError])
async def test_a_hook_error_hides_a_secret_the_plugin_added(error: type[Exception]) -> None:
    failed = await failure(FailsAfterAdding(error))
    assert str(failed) == (
        "plugin 'tok' failed in hook harness_started (impl FailsAfterAdding.harness_started"
        f"(harness)): {error.__name__}: the server refused the token ***"
    )
    told = "the server refused the token ***"
    assert failed.for_user() == (f"{told} (plugin 'tok')" if error is DshError else str(failed))
    assert SECRET in str(failed.cause)  # the exception as the plugin raised it


class SecretTokenSettings(BaseModel):
    token: SecretStr = SecretStr("")
    mirrors: list[dict[str, SecretStr]] = []


class DeclaresAndFailsBeforeAdding(FailsAfterAdding):
    """Declares its token secret, then fails quoting it before adding it."""

    settings = SecretTokenSettings

    @hookimpl
    def harness_started(self, harness: Any) -> None:
        section = harness.config.section("tok")
        token = section.token.get_secret_value()
        mirror = section.mirrors[0]["key"].get_secret_value()
        raise self.error(f"the server refused the token {token} (mirror {mirror})")


@pytest.mark.parametrize("error", [ValueError, DshError])
async def test_a_settings_value_declared_secretstr_is_hidden_before_the_plugin_adds_it(
    error: type[Exception],
) -> None:
    token, mirror = f"tok-Decl4red-{error.__name__}", f"mir-N3sted-{error.__name__}"
    text = f"tok: {{token: {token}, mirrors: [{{key: {mirror}}}]}}\n"
    with pytest.raises(HookError) as caught:
        async with Harness(
            plugins=[("tok", DeclaresAndFailsBeforeAdding(error))],
            load_entry_points=False,
            config_text=text,
        ):
            pass
    told = "the server refused the token *** (mirror ***)"
    assert str(caught.value).endswith(told)
    assert told in caught.value.for_user()
    assert redact(f"{token} {mirror}") == "*** ***"


async def test_a_declared_secret_is_hidden_in_the_harness_s_tool_results() -> None:
    secret = "tok-T00lResult-1a2b3c"
    model = ScriptedModel([tool_calls(("reveal", {})), text("ok")])
    async with scripted_harness(
        model,
        plugins=[("tok", SettingsOnly()), ("tools", Tools(secret))],
        load_entry_points=False,
        config_text=f"tok: {{token: {secret}}}\n",
    ) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        result = await agent.prompt("go")
    [shown] = [e.data for e in result.events if e.type == "tool/result"]
    assert secret not in repr(shown)
    assert "token=***" in repr(shown)


class Tools:
    """A ``reveal`` tool whose result quotes ``secret`` (read from where dsh cannot see)."""

    def __init__(self, secret: str) -> None:
        self.secret = secret

    @hookimpl
    def register_tools(self, register: Any) -> None:
        @tool
        def reveal() -> str:
            "Show the token."
            return f"token={self.secret}"

        register(reveal)


class SettingsOnly:
    """Declares its token secret and starts."""

    @hookimpl
    def register_settings(self, register: Any) -> None:
        register(SecretTokenSettings)


async def test_a_hook_error_sent_to_another_process_keeps_its_secret_hidden() -> None:
    """``for_user()`` quoted a plugin's ``DshError`` hiding the secrets the process
    holds when it was called: unpickled in a process that holds none (multiprocessing,
    concurrent.futures), it showed the secret."""
    error = await failure(FailsAfterAdding(DshError))
    read = "import pickle, sys; print(pickle.load(sys.stdin.buffer).for_user())"
    there = await anyio.run_process([sys.executable, "-c", read], input=pickle.dumps(error))
    shown = there.stdout.decode()
    assert SECRET not in shown
    assert shown.strip() == error.for_user()


def token_in_agent_options(secret: str) -> Harness:
    """A harness whose dsh.yml gives agent ``main`` the ``tok`` token ``secret`` in its
    options (``SettingsOnly`` declares it ``SecretStr``)."""
    text = (
        "models:\n  m:\n    provider: openai-compatible\n    base_url: http://127.0.0.1:9/v1\n"
        f"agents:\n  - id: main\n    model: m\n    options: {{tok: {{token: {secret}}}}}\n"
    )
    return Harness(plugins=[("tok", SettingsOnly())], load_entry_points=False, config_text=text)


async def test_a_secret_declared_in_an_agent_s_options_is_hidden_once_the_file_loads() -> None:
    secret = "tok-Ag3ntOptions-4d5e6f"
    async with token_in_agent_options(secret):
        assert redact(f"token {secret}") == "token ***"


async def test_an_agent_s_declared_secret_is_among_its_harness_s_secrets() -> None:
    secret = "tok-Ag3ntTools-7a8b9c"
    async with token_in_agent_options(secret) as harness:
        assert secret in harness.secrets()
