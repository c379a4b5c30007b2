"""Everything dsh-compaction needs from the host beyond the ``Agent`` protocol's basics.

Hooks receive the agent; the rest is reached through it, and only here:

- ``agent.harness`` — the validated ``compaction:`` section, the model registry
  (context windows, the summariser) and the tool registry (a manual compaction builds a
  request as the loop does);
- ``agent.relay`` — this plugin's own hooks, with dsh's call styles (``call_*``; each
  ``compaction_keep`` result checked as it comes), and its dispatcher's plans: the impls
  of a hook in call order, to name a plugin.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from dsh import HookError, ModelRequest
from dsh_compaction._settings import CompactionSettings

if TYPE_CHECKING:
    from dsh.llm import Model
    from dsh.session import Session

__all__ = [
    "Host",
    "base_request",
    "call_first_named",
    "call_first_result",
    "call_waterfall",
    "find_model",
    "flush",
    "harness_section",
    "impls",
    "plugins_before",
    "report",
    "wrong_result",
]


class Host(Protocol):
    """The agent as this plugin sees it (``dsh.agent.Agent`` plus the registries)."""

    @property
    def id(self) -> str: ...

    @property
    def session(self) -> Session: ...

    @property
    def options(self) -> dict[str, Any]: ...


def harness_section(agent: Host) -> CompactionSettings | None:
    """The harness's validated ``compaction:`` section (None without one)."""
    harness = getattr(agent, "harness", None)
    if harness is None:
        return None
    for name, model in harness.settings.items():
        if model is CompactionSettings:
            section: CompactionSettings | None = harness.config.section(name)
            return section
    return None


def find_model(agent: Host, name: str | None) -> Model | None:
    """The registered model ``name`` (the agent's model if None), or None if unknown."""
    harness = getattr(agent, "harness", None)
    models = harness.models if harness is not None else None
    name = name or agent.options.get("model")
    if models is None or name is None or name not in models:
        return None
    model: Model = models.get(name, agent=agent.id)
    return model


def base_request(agent: Host) -> ModelRequest:
    """The request the loop would build for the agent's next step."""
    harness = getattr(agent, "harness", None)
    tools = harness.tools if harness is not None else None
    return ModelRequest.model_construct(
        model=agent.options.get("model"),
        system=agent.options.get("system_prompt", ""),
        messages=agent.session.history,
        tools=tools.specs() if tools is not None else (),
        max_tokens=agent.options.get("max_tokens"),
        options={},
    )


async def call_first_result(agent: Host, hook: str, **kwargs: Any) -> Any:
    """This plugin's firstresult hook ``hook``; None when nobody implements it."""
    relay = getattr(agent, "relay", None)
    if relay is None or not relay.implemented(hook):
        return None
    return await relay.call_first_result(hook, agent=agent, **kwargs)


async def call_first_named(agent: Host, hook: str, **kwargs: Any) -> tuple[str, Any] | None:
    """``call_first_result`` with the plugin that answered: ``(plugin name, result)``."""
    relay = getattr(agent, "relay", None)
    if relay is None or not relay.implemented(hook):
        return None
    named: tuple[str, Any] | None = await relay.call_first_named(hook, agent=agent, **kwargs)
    return named


def impls(agent: Host, hook: str) -> tuple[Any, ...]:
    """The impls of ``hook`` in call order, as dsh's dispatcher runs them (each with its
    ``plugin_name`` and ``describe()``); empty when the agent has no relay."""
    relay = getattr(agent, "relay", None)
    dispatcher = getattr(relay, "dispatcher", None)
    if dispatcher is None:
        return ()
    plan: tuple[Any, ...] = dispatcher.plan(hook)
    return plan


def wrong_result(agent: Host, hook: str, plugin: str, wrong: Exception) -> HookError:
    """The failure of ``plugin``'s impl of ``hook`` that returned what it should not
    (``wrong`` says what), naming the impl as dsh's dispatcher does for a raising one
    (only the hook, for an agent without dsh's dispatcher)."""
    relay = getattr(agent, "relay", None)
    if relay is None:
        return HookError(plugin, hook, hook, wrong)
    error: HookError = relay.failure(plugin, hook, wrong)
    return error


def report(agent: Host, error: HookError) -> None:
    """Report the failure of a plugin's impl of one of this plugin's hooks that the
    compaction carried on without, as dsh reports a failure it contains (logged;
    dsh.testing's ``ErrorRecorder`` records it). An agent without a relay has none to
    report to: the compaction's own record of the failure is all there is."""
    relay = getattr(agent, "relay", None)
    if relay is not None:
        relay.report(error)


def plugins_before(agent: Host, hook: str, function: Any) -> list[str]:
    """The plugins whose ``hook`` impls run before ``function`` (one of this plugin's
    impls), in call order."""
    names: list[str] = []
    for impl in impls(agent, hook):
        if impl.function is function:
            return names
        if impl.plugin_name not in names:
            names.append(impl.plugin_name)
    return names


async def call_waterfall(
    agent: Host, hook: str, key: str, wrong: Callable[[Any], str | None], **kwargs: Any
) -> Any:
    """This plugin's waterfall hook ``hook`` over ``kwargs[key]`` (unchanged when nobody
    implements it), each impl's result checked by ``wrong`` (what is wrong with it, or
    None): a wrong result is the failure of the impl that returned it, a ``HookError``
    naming its plugin and impl, before a later impl trips over it."""
    relay = getattr(agent, "relay", None)
    if relay is None or not relay.implemented(hook):
        return kwargs[key]
    return await relay.call_waterfall(hook, key, wrong=wrong, agent=agent, **kwargs)


async def flush(agent: Host) -> None:
    """Make the session durable now, as the loop does after every turn (a failure is
    reported by the agent, not raised); a no-op for agents that cannot flush."""
    flush = getattr(agent, "flush", None)
    if flush is not None:
        await flush()
