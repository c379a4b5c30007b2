"""A waterfall's check of each result (``call_waterfall(..., wrong=check)``): a result the
caller cannot use is the failure of the impl that returned it, not of the next impl (which
would trip over it) or of the caller."""

from __future__ import annotations

import gc
import warnings
from typing import Any

import pytest

from dsh import HookError, ModelRequest, PluginManager, hookimpl, hookspec

REQ = ModelRequest(system="base")


class Specs:
    @staticmethod
    @hookspec
    def count_up(number: int) -> Any: ...


def adding(step: Any, seen: list[str], name: str) -> object:
    """An impl of ``count_up`` that adds ``step``, or returns it when it is no number."""

    class Plugin:
        @hookimpl(optionalhook=True)
        def count_up(self, number: int) -> Any:
            seen.append(name)
            return number + step if isinstance(step, int) else step

    return Plugin()


def not_a_number(result: object) -> str | None:
    return None if isinstance(result, int) else f"returned {result!r}, not a number"


@pytest.fixture
def pm(dsh_pm: PluginManager) -> PluginManager:
    dsh_pm.add_hookspecs(Specs)
    return dsh_pm


async def test_a_wrong_result_is_the_failure_of_the_impl_that_returned_it(
    pm: PluginManager,
) -> None:
    seen: list[str] = []
    # the later registered runs first: good, bad, after
    pm.register(adding(1, seen, "after"), "after")
    pm.register(adding("ten", seen, "bad"), "bad")
    pm.register(adding(1, seen, "good"), "good")

    with pytest.raises(HookError) as caught:
        await pm.relay.call_waterfall("count_up", "number", wrong=not_a_number, number=0)

    error = caught.value
    assert (error.plugin, error.hook, error.code) == ("bad", "count_up", "HOOK")
    assert isinstance(error.cause, TypeError)
    assert str(error) == (
        "plugin 'bad' failed in hook count_up (impl adding.<locals>.Plugin.count_up(number)): "
        "TypeError: returned 'ten', not a number"
    )
    assert seen == ["good", "bad"]  # the next impl never saw it


async def test_results_the_check_accepts_are_chained_and_none_is_not_checked(
    pm: PluginManager,
) -> None:
    seen: list[str] = []
    checked: list[object] = []

    def wrong(result: object) -> str | None:
        checked.append(result)
        return not_a_number(result)

    pm.register(adding(1, seen, "a"), "a")
    pm.register(adding(None, seen, "none"), "none")
    pm.register(adding(10, seen, "b"), "b")

    result = await pm.relay.call_waterfall("count_up", "number", wrong=wrong, number=0)

    assert (result, checked, seen) == (11, [10, 11], ["b", "none", "a"])


async def test_a_plain_impl_returning_a_coroutine_is_named_before_the_check_sees_it(
    pm: PluginManager,
) -> None:
    class Plain:
        @hookimpl(optionalhook=True)
        def count_up(self, number: int) -> Any:
            async def later() -> int:
                return number

            return later()

    checked: list[object] = []
    pm.register(Plain(), "plain")

    with pytest.raises(HookError) as caught:
        await pm.relay.call_waterfall(
            "count_up", "number", wrong=lambda result: checked.append(result), number=0
        )

    assert caught.value.plugin == "plain"
    assert str(caught.value).endswith(
        "TypeError: returned coroutine from a plain def; make the impl async def so that it "
        "is awaited"
    )
    assert checked == []
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an unawaited coroutine warns when collected
        gc.collect()


async def test_on_a_hook_with_a_declared_type_the_check_runs_after_the_types(
    dsh_pm: PluginManager,
) -> None:
    def appending(value: Any) -> object:
        class Plugin:
            @hookimpl
            def agent_request(self, request: ModelRequest) -> Any:
                if isinstance(value, str):
                    return request.model_copy(update={"system": request.system + value})
                return value

        return Plugin()

    def no_x(result: object) -> str | None:
        assert isinstance(result, ModelRequest)  # the type was checked first
        return "returned a system prompt with an x" if "x" in result.system else None

    async def call() -> Any:
        kwargs = {"agent": None, "request": REQ, "turn": 1, "step": 1}
        return await dsh_pm.relay.call_waterfall("agent_request", "request", wrong=no_x, **kwargs)

    dsh_pm.register(appending("-x"), "x")
    dsh_pm.register(appending("-a"), "a")
    with pytest.raises(HookError, match="returned a system prompt with an x") as caught:
        await call()
    assert caught.value.plugin == "x"

    dsh_pm.unregister(name="x")
    dsh_pm.register(appending(42), "number")
    with pytest.raises(HookError, match="returned int where ModelRequest is expected") as caught:
        await call()
    assert caught.value.plugin == "number"

    dsh_pm.unregister(name="number")
    assert (await call()).system == "base-a"


async def test_a_check_that_raises_is_the_failure_of_the_impl_whose_result_it_checked(
    pm: PluginManager,
) -> None:
    """A result malformed enough to break the check (an iterator that raises) is still
    that impl's failure, named, not an exception escaping the call raw."""

    class Broken(list[int]):
        def __iter__(self) -> Any:
            raise RuntimeError("broken iterator")

    seen: list[str] = []
    pm.register(adding(1, seen, "after"), "after")
    pm.register(adding(Broken(), seen, "bad"), "bad")

    def not_numbers(result: Any) -> str | None:
        return None if all(isinstance(i, int) for i in result) else "returned junk"

    with pytest.raises(HookError) as caught:
        await pm.relay.call_waterfall("count_up", "number", wrong=not_numbers, number=0)

    assert (caught.value.plugin, caught.value.hook) == ("bad", "count_up")
    assert isinstance(caught.value.cause, RuntimeError)
    assert str(caught.value).endswith("RuntimeError: broken iterator")
    assert seen == ["bad"]


@pytest.mark.parametrize("said", ["", False])
async def test_a_check_that_refuses_without_a_reason_still_says_what_was_refused(
    pm: PluginManager, said: Any
) -> None:
    """Only None means nothing is wrong; anything else refuses the result, and an empty
    reason gets a message that says so rather than an empty one."""
    seen: list[str] = []
    pm.register(adding(1, seen, "one"), "one")

    with pytest.raises(HookError) as caught:
        await pm.relay.call_waterfall("count_up", "number", wrong=lambda _: said, number=0)

    assert caught.value.plugin == "one"
    assert str(caught.value).endswith(
        f"TypeError: returned int, which the caller's check refused without saying why "
        f"(it returned {said!r}, not None or a reason)"
    )
