"""A plugin's failure may quote a secret: a ``HookError`` says it as ``***`` once dsh
holds it (``Harness.add_secrets``, a secret variable, a model API key), in its message
and in ``for_user()`` (what ``dsh`` prints), as the command line and log records did.

Before: the Python API's ``HookError`` (``async with Harness(...)`` raising it from
``harness_started``) quoted the secret whole even after the plugin had added it.

Not fixed (strict xfail): a secret a plugin learns from its settings and adds in its
``harness_started`` is unknown to dsh until then, so a failure of that plugin before the
call (reading or checking its settings) shows it, on the command line too. No hook
comes earlier with the settings: the fix needs a way to declare a settings value secret
before any hook runs (``docs/hooks.md``, ``register_secrets``, says to add the secret
first thing)."""

from __future__ import annotations

import pickle
import sys
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from dsh import DshError, HookError, hookimpl
from dsh.harness import Harness

SECRET = "tok-HookErr0rSecret-5f1e2d3c4b"
#: Another: dsh remembers a secret for the process (every harness's log records hide
#: it), so the test of a secret not added yet needs one no other test adds.
NOT_ADDED = "tok-N0tAddedYet-9a8b7c6d5e"


class TokenSettings(BaseModel):
    token: str = ""


class FailsAfterAdding:
    """Adds its settings' token as a secret, then fails quoting it."""

    def __init__(self, error: type[Exception]) -> None:
        self.error = error

    @hookimpl
    def register_settings(self, register: Any) -> None:
        register(TokenSettings)

    @hookimpl
    def harness_started(self, harness: Any) -> None:
        token = harness.config.section("tok").token
        harness.add_secrets([token])
        raise self.error(f"the server refused the token {token}")


class FailsBeforeAdding(FailsAfterAdding):
    @hookimpl
    def harness_started(self, harness: Any) -> None:
        token = harness.config.section("tok").token
        raise self.error(f"the server refused the token {token}")  # before add_secrets


async def failure(plugin: object, secret: str = SECRET) -> HookError:
    with pytest.raises(HookError) as caught:
        async with Harness(
            plugins=[("tok", plugin)],
            load_entry_points=False,
            config_text=f"tok: {{token: {secret}}}\n",
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


@pytest.mark.xfail(
    strict=True,
    reason="gap: a settings secret a plugin adds in harness_started is unknown to dsh "
    "when the plugin fails before adding it; its message shows the secret",
)
async def test_a_hook_error_hides_a_settings_secret_the_plugin_had_not_added_yet() -> None:
    failed = await failure(FailsBeforeAdding(ValueError), NOT_ADDED)
    assert NOT_ADDED not in str(failed)


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
