"""The async hook dispatcher: pluggy's order and argument binding, plus awaiting.

pluggy keeps the registry (markers, validation, tryfirst/trylast, LIFO, blocking) but
its ``_multicall`` neither awaits nor chains values. Dispatch here walks the same impls
in the same order (``reversed(get_hookimpls())``), passes each impl only the arguments
it names, awaits ``async def`` impls, and wraps every failure in a ``HookError`` that
names the plugin and the hook: an exception, or a stray cancellation (``dsh._stray``),
while a real cancellation propagates. Plans are cached per hook and dropped by the plugin
manager whenever an impl is added or removed, so a call does no introspection.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Collection
from typing import Any, Final, final

import pluggy

from dsh._grace import bounded
from dsh._grace import current as current_grace
from dsh._hook_results import Check, conforms, problem, typed, unawaited, wrong_type
from dsh._impl import Impl, called, is_async_function
from dsh._left_out import mark_refused
from dsh._ready import READY
from dsh._secrets import get_logger
from dsh._stray import failed
from dsh.errors import DshError, HookError

__all__ = ["Dispatcher", "Impl", "is_async_function"]

log = get_logger("dsh.plugins")

Reporter = Callable[[HookError], None]


async def _raise(error: HookError) -> None:
    raise error


def default_reporter(error: HookError) -> None:
    log.error("%s", error, exc_info=error.cause)


@final
class _Plans(dict[str, tuple[Impl, ...]]):
    """hook -> its plan; a hook's plan is built on its first lookup."""

    __slots__ = ("_build",)

    def __init__(self, build: Callable[[str], tuple[Impl, ...]]) -> None:
        super().__init__()
        self._build = build

    def __missing__(self, hook: str) -> tuple[Impl, ...]:
        plan = self[hook] = self._build(hook)
        return plan


@final
class Dispatcher:
    """Calls hooks in pluggy's order with dsh's call styles. See ``dsh.hookspecs``."""

    __slots__ = (
        "_async_plans",
        "_hook",
        "_last",
        "_plans",
        "first",
        "listeners",
        "report",
        "returns",
    )

    def __init__(
        self,
        pm: pluggy.PluginManager,
        report: Reporter = default_reporter,
        last: Collection[str] = (),
    ) -> None:
        self._hook: Final = pm.hook
        # ``self._plans[hook]``: one C lookup per call once the plan is built
        self._plans: Final = _Plans(self._build)
        self._async_plans: set[str] = set()  # hooks whose plan holds an async impl
        #: Plugins whose impls run after every other impl (the core defaults), so a
        #: plugin's own ``trylast`` impl still runs before the core's fallback.
        self._last: Final = frozenset(last)
        #: Plugins whose impls run before every other, whenever they were registered
        #: (dsh.testing's hook recorder, which must see every call); call
        #: ``invalidate()`` after changing it if they are registered already.
        self.first: set[str] = set()
        #: Called with every failure that a call style contains rather than raises.
        self.report = report
        #: Called after every change of the impls (to re-derive what depends on them).
        self.listeners: list[Callable[[], None]] = []
        #: hook -> the type its impls must return when they return something; a value
        #: of another type is that impl's failure (waterfall and first_result check it).
        self.returns: dict[str, type] = {}

    def invalidate(self) -> None:
        """Forget cached plans; the plugin manager calls this on (un)registration."""
        self._plans.clear()
        self._async_plans.clear()
        for listener in self.listeners:
            listener()

    @property
    def plans(self) -> dict[str, tuple[Impl, ...]]:
        """Hook -> its impls in call order, built on a hook's first lookup: the same
        dict for the dispatcher's life (emptied when impls change)."""
        return self._plans

    @property
    def hooks(self) -> pluggy.HookRelay:
        """The plugin manager's hook callers (``pm.hook``)."""
        return self._hook

    def plan(self, hook: str) -> tuple[Impl, ...]:
        """The impls of ``hook`` in call order (built on first use, then cached)."""
        return self._plans[hook]

    def _build(self, hook: str) -> tuple[Impl, ...]:
        caller: pluggy.HookCaller | None = getattr(self._hook, hook, None)
        impls = caller.get_hookimpls() if caller is not None else []
        ordered = [i for i in reversed(impls) if i.plugin_name in self.first]
        rest = [i for i in reversed(impls) if i.plugin_name not in self.first]
        ordered += [i for i in rest if i.plugin_name not in self._last]
        ordered += [i for i in rest if i.plugin_name in self._last]
        plan = tuple(_impl(i) for i in ordered)
        if any(impl.is_async for impl in plan):
            self._async_plans.add(hook)
        return plan

    async def waterfall(
        self, hook: str, key: str, kwargs: dict[str, Any], wrong: Check | None = None
    ) -> Any:
        """Chain ``kwargs[key]`` through every impl; None means unchanged. Raises HookError.

        ``wrong(result)``, when given, says what is wrong with an impl's result (None:
        nothing): a wrong result is the failure of the impl that returned it, as a result
        of the wrong type is, before the next impl sees it."""
        expect = self.returns.get(hook)
        if wrong is not None and expect is not None:
            wrong, expect = typed(expect, wrong), None  # one check per result, not two
        for impl in self._plans[hook]:
            try:
                result = impl.call(kwargs)
                if impl.is_async:
                    result = await result
            except BaseException as exc:
                if not failed(exc):
                    raise
                raise impl.fail(hook, exc) from exc
            if result is not None:
                if expect is not None:
                    if not conforms(result, expect):
                        raise impl.fail(hook, wrong_type(result, expect, impl.is_async))
                elif inspect.isawaitable(result):  # a plugin's own hook, untyped
                    raise impl.fail(hook, unawaited(result, impl.is_async))
                elif wrong is not None and (refused := problem(wrong, result)) is not None:
                    raise impl.fail(hook, refused) from refused
                kwargs[key] = result
        return kwargs[key]

    async def first_result(self, hook: str, kwargs: dict[str, Any]) -> tuple[str, Any] | None:
        """The first non-None result and the name of the plugin that gave it, as
        ``(plugin, result)``, or None; later impls are not called. Raises HookError."""
        expect = self.returns.get(hook)
        for impl in self._plans[hook]:
            try:
                result = impl.call(kwargs)
                if impl.is_async:
                    result = await result
            except BaseException as exc:
                if not failed(exc):
                    raise
                raise impl.fail(hook, exc) from exc
            if result is not None:
                if expect is not None:
                    if not conforms(result, expect):
                        raise impl.fail(hook, wrong_type(result, expect, impl.is_async))
                elif inspect.isawaitable(result):  # a plugin's own hook, untyped
                    raise impl.fail(hook, unawaited(result, impl.is_async))
                return impl.plugin_name, result
        return None

    async def collect(self, hook: str, kwargs: dict[str, Any]) -> list[Any]:
        """Every impl's non-None result, in hook order. Raises HookError."""
        results = []
        for impl in self._plans[hook]:
            try:
                result = impl.call(kwargs)
                if impl.is_async:
                    result = await result
                if result is not None and inspect.isawaitable(result):
                    raise unawaited(result, impl.is_async)
            except BaseException as exc:
                if not failed(exc):
                    raise
                raise impl.fail(hook, exc) from exc
            if result is not None:
                results.append(result)
        return results

    def notify(self, hook: str, kwargs: dict[str, Any]) -> Awaitable[None]:
        """Run every impl in order; each failure is reported and the rest still run.
        (With no impls: ``READY``, so a hook nobody implements costs no coroutine.)"""
        plan = self._plans[hook]
        return self._notify(hook, plan, kwargs) if plan else READY

    async def _notify(
        self, hook: str, plan: tuple[Impl, ...], kwargs: dict[str, Any], shield: bool = False
    ) -> None:
        for impl in plan:
            try:
                result = impl.call(kwargs)
                if impl.is_async:  # in an agent's task: within its grace
                    result = await bounded(hook, impl, result, shield)
                if result is not None and inspect.isawaitable(result):
                    raise unawaited(result, impl.is_async)
            except BaseException as exc:
                if not failed(exc):
                    raise
                self.report(impl.fail(hook, exc))

    async def notify_each(self, hook: str, kwargs: dict[str, Any]) -> None:
        """``notify`` that calls every impl even when the caller is cancelled meanwhile:
        the impl the cancellation cut short and each async one after it are cancelled
        at their first await (none can hang the caller), and it is raised after the
        last. For a notification a later one pairs with (``agent_created``)."""
        import anyio

        cancelled: BaseException | None = None
        for impl in self._plans[hook]:
            try:
                if cancelled is None:
                    await self._notify(hook, (impl,), kwargs)
                    continue
                # asyncio's own cancellation (wait_for, task.cancel()) is delivered
                # once, not at each await as anyio's: cancelled here for every impl
                with anyio.CancelScope() as scope:
                    scope.cancel()
                    await self._notify(hook, (impl,), kwargs)
            except anyio.get_cancelled_exc_class() as exc:
                cancelled = cancelled or exc
        if cancelled is not None:
            raise cancelled

    def notify_inline(self, hook: str, kwargs: dict[str, Any]) -> Awaitable[None] | None:
        """Notify every impl so that a cancellation cannot cut it short.

        Sync impls run right here, and None is returned; with an async impl in the plan
        the whole notification is returned as an awaitable that runs shielded (only async
        impls can be interrupted, so only they pay for the shield); in an agent's task,
        each async impl shielded within the agent's grace (``dsh._grace``)."""
        plan = self._plans[hook]
        if hook in self._async_plans:  # in an agent's task: each async impl in its grace
            if current_grace() is not None:
                return self._notify(hook, plan, kwargs, shield=True)
            return self._notify_shielded(hook, kwargs)
        for impl in plan:
            try:
                result = impl.call(kwargs)
                if result is not None and inspect.isawaitable(result):
                    raise unawaited(result)
            except BaseException as exc:
                if not failed(exc):
                    raise
                self.report(impl.fail(hook, exc))
        return None

    async def _notify_shielded(self, hook: str, kwargs: dict[str, Any]) -> None:
        import anyio

        with anyio.CancelScope(shield=True):
            await self.notify(hook, kwargs)

    def gather(self, hook: str, kwargs: dict[str, Any]) -> Awaitable[None]:
        """Await every impl concurrently; once all settled, raise the first failure.

        "First" is in hook order, so the error does not depend on timing. A single impl
        (the usual case: one persistence plugin) runs without a task: a sync one right
        here (``READY`` when it succeeded, an awaitable raising its failure when not), an
        async one awaited directly. With no impls: ``READY``.
        """
        plan = self._plans[hook]
        if len(plan) != 1:
            return self._gather(hook, plan, kwargs) if plan else READY
        (impl,) = plan
        if impl.is_async:
            return self._await_one(hook, impl, kwargs)
        try:
            result = impl.call(kwargs)
            if result is not None and inspect.isawaitable(result):
                raise unawaited(result)
        except BaseException as exc:
            if not failed(exc):
                raise
            return _raise(impl.fail(hook, exc))
        return READY

    async def _await_one(self, hook: str, impl: Impl, kwargs: dict[str, Any]) -> None:
        try:
            result = await bounded(hook, impl, impl.call(kwargs))
            if result is not None and inspect.isawaitable(result):
                raise unawaited(result, in_async=True)
        except BaseException as exc:
            if not failed(exc):
                raise
            raise impl.fail(hook, exc) from exc

    async def _gather(self, hook: str, plan: tuple[Impl, ...], kwargs: dict[str, Any]) -> None:
        errors: list[HookError | None] = [None] * len(plan)

        async def run(index: int, impl: Impl) -> None:
            try:
                result = impl.call(kwargs)
                if impl.is_async:
                    result = await bounded(hook, impl, result)
                if result is not None and inspect.isawaitable(result):
                    raise unawaited(result, impl.is_async)
            except BaseException as exc:
                if not failed(exc):
                    raise
                errors[index] = impl.fail(hook, exc)

        if hook in self._async_plans:
            import anyio

            async with anyio.create_task_group() as tg:
                for index, impl in enumerate(plan):
                    tg.start_soon(run, index, impl)
        else:
            for index, impl in enumerate(plan):
                await run(index, impl)
        for error in errors:
            if error is not None:
                raise error

    def register(self, hook: str, callback: Callable[..., None]) -> None:
        """Call a ``register_*`` hook; each impl's ``register(...)`` becomes
        ``callback(plugin_name, ...)``. Synchronous: these run at start-up, before any
        event loop, and the plugin manager rejects ``async def`` impls of them.
        Failures raise HookError (start-up stops): a ``SystemExit`` too, as in every
        other call style; what must propagate (``KeyboardInterrupt``) propagates."""
        for impl in self.plan(hook):
            refused: list[BaseException] = []

            def register(
                *args: Any,
                _plugin: str = impl.plugin_name,
                _refused: list[BaseException] = refused,
                **kw: Any,
            ) -> None:
                try:
                    callback(_plugin, *args, **kw)
                except Exception as exc:
                    _refused.append(exc)
                    raise

            try:
                result = impl.call({"register": register})
                if inspect.isawaitable(result):  # nothing awaits it: nothing registered
                    unawaited(result)  # closed: no "never awaited" warning into dsh
                    raise TypeError(
                        f"returned {type(result).__name__}; {hook} runs at start-up, before "
                        "any event loop, so nothing would await it: call register(...) in "
                        "the plain def itself"
                    )
            except BaseException as exc:
                if not failed(exc):  # KeyboardInterrupt, a test's outcome: propagates
                    raise
                if refused and exc is refused[-1] and isinstance(exc, DshError):
                    # the core refused what was registered; the message names the plugin
                    mark_refused(exc, impl.plugin_name, hook)
                    raise
                raise impl.fail(hook, exc) from exc


def _impl(hookimpl: pluggy.HookImpl) -> Impl:
    names = tuple(hookimpl.argnames)
    call, is_async = called(hookimpl.function, names)
    return Impl(call, hookimpl.function, names, is_async, hookimpl.plugin_name)
