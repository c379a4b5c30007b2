"""The harness: the service container that a program, the CLI and plugins share.

::

    async with Harness(config="dsh.yml") as harness:
        agent = await harness.agents.create("main", options={"model": "fast"})
        agent.send("hello")
        await agent.when_idle()

Entering it registers models, tools and settings from every plugin, validates the
config, starts the agents the config lists; leaving it disposes every agent cleanly.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import replace
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

import anyio
from pydantic import BaseModel

from dsh._arg_types import a_kind
from dsh._event import check_plugin_type
from dsh._grace import started as grace_started
from dsh._late_plugins import StartedPlugins
from dsh._plugin_reducers import plugin_reducer
from dsh._relay import hook_returns
from dsh._secret_variables import SecretVariables
from dsh._secrets import get_logger
from dsh.agent import AgentRegistry
from dsh.errors import DshError, EventTypeError
from dsh.llm.registry import ModelRegistry
from dsh.plugins import PluginManager, create_plugin_manager
from dsh.session import HistoryReducer, SessionStore
from dsh.tools import ToolRegistry

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from dsh.config import Config
    from dsh.llm._http import HttpModel

__all__ = ["Harness"]

log = get_logger("dsh.config")


class Harness:
    """Plugin manager, sessions, agents, models, tools and config, in one place.

    ``config`` is a loaded ``Config``, a path to a YAML file, or None (defaults: no
    file is looked for); ``config_text`` gives YAML inline instead (not both: a
    ``TypeError``). The plugin arguments are those of ``create_plugin_manager`` (every
    installed plugin loads unless ``load_entry_points=False`` or ``select=["no:NAME"]``);
    pass ``pm`` to use a manager you built. ``workspace`` (default: the current
    directory), an existing directory, is where agents work. ``starts_agents=False`` is
    for a program that only looks at what the harness holds (``dsh models``, ``dsh
    tools``): the config's agents are not started and no agent can be created or
    resumed, so settings for a plugin that does not run are warnings, not errors (as
    ``load_config(..., starts_agents=False)``), and so is an entry of ``models:`` that
    cannot be built (left out).

    A harness is entered once (``async with``; again, or inside itself, is a
    ``DshError``). Once started: ``agents`` (create, resume, get, list), ``config``,
    ``models`` and ``tools`` (the registries: ``get()``, ``add()``; ``models.names()``,
    ``tools.specs()``), ``sessions`` (the live sessions), ``settings`` (plugin section
    -> settings model), ``pm`` and ``relay`` (the plugin manager, and its hooks as async
    calls), ``workspace``; ``secrets()`` (what tool results are cleared of) and
    ``add_secrets()``. docs/python.md shows a program built on it.
    """

    def __init__(
        self,
        *,
        config: Config | str | os.PathLike[str] | None = None,
        config_text: str | None = None,
        plugins: Iterable[object | tuple[str, object]] = (),
        load_entry_points: bool = True,
        select: Iterable[str] = (),
        env: Mapping[str, str] | None = None,
        pm: PluginManager | None = None,
        workspace: str | os.PathLike[str] | None = None,
        starts_agents: bool = True,
    ) -> None:
        _check_config(config, config_text)
        #: The directory agents work in; file tools are confined to it.
        self.workspace = Path(workspace if workspace is not None else Path.cwd()).resolve()
        if not self.workspace.is_dir():
            raise DshError(f"workspace {str(self.workspace)!r} is not a directory")
        self.pm = pm or create_plugin_manager(
            plugins, load_entry_points=load_entry_points, select=select, env=env
        )
        self.relay = self.pm.relay
        # an interception impl returning the wrong type fails, named, like one raising
        self.pm.dispatcher.returns.update(hook_returns())
        self.sessions = SessionStore()
        self._follow_observers()  # and again on every (un)registration while started
        self.models = ModelRegistry(secrets=self.secrets)
        self.tools = ToolRegistry()
        #: plugin section name -> the pydantic model that validates it
        self.settings: dict[str, type[BaseModel]] = {}
        self._config_arg = config
        self._config_text = config_text
        self._env = env
        self._starts_agents = starts_agents
        #: models built from ``models:`` in the config; their connections close on exit
        self._config_models: list[HttpModel] = []
        self._config: Config | None = None
        self._task_group: TaskGroup | None = None
        #: "started" from the first ``__aenter__`` on, "stopped" once it has left
        self._entered: str | None = None
        self._agents: AgentRegistry | None = None
        #: from start on: warns of a plugin registered late (``dsh._late_plugins``)
        self._late: StartedPlugins | None = None
        self._secrets: tuple[str, ...] | None = None
        #: the models' written keys ``_secrets`` was found with (``secrets``)
        self._secrets_written: frozenset[str] = frozenset()
        #: the environment variables plugins declared secret (``register_secrets``)
        self.secret_variables = SecretVariables(env)

    @property
    def config(self) -> Config:
        if self._config is None:
            raise DshError("the harness is not started: use `async with Harness(...)`")
        return self._config

    @property
    def agents(self) -> AgentRegistry:
        if self._agents is None:
            raise DshError("the harness is not started: use `async with Harness(...)`")
        return self._agents

    @property
    def starts_agents(self) -> bool:
        """False for a harness made with ``starts_agents=False``: no agent runs in it, so
        a plugin need not ready what only a running agent uses (a store to write)."""
        return self._starts_agents

    def secrets(self) -> tuple[str, ...]:
        """The values of the model API keys this harness can see (in its ``env`` and the
        process's), the keys written into the ``base_url`` query and ``headers`` of its
        HTTP models (a ``models:`` entry's, a ``-m ...@URL?api-key=...``'s, a plugin's
        ``HttpModel`` registered in it, or wrapped by a model registered in it:
        ``ModelRegistry.written_keys``) and the secrets in the plugins' secret variables,
        which every tool result is cleared of before it is logged. Not the keys of a
        model built and not registered here (another harness's): log records have them
        hidden (``dsh._secrets.known_keys``), this harness's text does not."""
        written = self.models.written_keys()
        if self._secrets is None or written is not self._secrets_written:
            from dsh._secrets import secret_values

            config = self._config
            found = set(secret_values(config))
            if self._env is not None:
                found.update(secret_values(config, self._env))
            found.update(written)
            found.update(self.secret_variables.values())
            self._secrets = tuple(sorted(found, key=len, reverse=True))
            self._secrets_written = written
        return self._secrets

    def add_secrets(self, values: Iterable[str]) -> None:
        """Hide ``values`` from now on as the model API keys are (each of 8 characters or
        more): in every tool result of this harness's agents, in log records and in
        ``dsh.redact``. For a secret a plugin learns from its settings rather than from
        an environment variable (``register_secrets``): dsh-persistence adds the password
        of ``persistence.url`` in ``harness_started``, before any agent runs."""
        self.secret_variables.add_values(values)
        self._secrets = None

    def hidden_variables(self) -> frozenset[str]:
        """The environment variables the ``bash`` tool's commands run without: the model
        API keys' (``dsh._secrets.key_variables``) and the plugins' secret variables."""
        from dsh._secrets import key_variables

        return self.secret_variables.names().union(key_variables(self._config))

    def _follow_observers(self) -> None:
        """Sessions tell the ``session_event`` hook about events only while some plugin
        implements it (kept up to date as plugins come and go)."""
        self.sessions.observer = self.relay.event_observer()

    def _unfollow_late(self) -> None:
        if self._late is not None:
            self.pm.dispatcher.listeners.remove(self._late)
            self._late = None

    def _add_reducer(self, plugin: str, event_type: str, reducer: HistoryReducer) -> None:
        try:  # a plugin's own type only: the core logs its types without a take-back
            check_plugin_type(event_type)
        except EventTypeError as error:
            raise DshError(
                f"plugin {plugin!r} registers a history reducer for {event_type!r}: " + error.reason
            ) from None
        reducers = dict(self.sessions.reducers)
        if event_type in reducers:
            raise DshError(
                f"plugin {plugin!r} registers a history reducer for {event_type!r}, "
                "which already has one"
            )
        reducers[event_type] = plugin_reducer(plugin, event_type, reducer)
        self.sessions.reducers = reducers

    def _load_config(self) -> Config:
        from dsh._config_registered import RegisteredModels
        from dsh._plugin_off import model_off
        from dsh.config import Config, load_config

        if isinstance(self._config_arg, Config):
            config = self._config_arg
            known = config.registered
            if known is None or known >= self.settings.keys():
                return config
            # loaded with ``settings=`` for some plugins: the harness knows them all
            return replace(config, registered=frozenset(known | self.settings.keys()))
        return load_config(
            self._config_arg,
            text=self._config_text,
            settings=self.settings,
            blocked=self.pm.is_blocked,
            left_out=self.pm.is_left_out,
            starts_agents=self._starts_agents,
            loaded=self.pm.has_plugin,
            registered=RegisteredModels(self.pm).of,
            missing=self.pm.is_missing,
            model_off=model_off(self.pm),
        )

    def _add_config_models(self, config: Config) -> None:
        """Build each entry of ``models:`` and register it under its key (origin
        "config"). A name a plugin registered with a provider dsh does not build (e.g.
        ``provider: scripted``) is served by that plugin. An entry that cannot be built
        (an unknown provider, as when the plugin serving it is left out) is a
        ``ConfigError``; in a harness that starts no agent, a warning, and it is left
        out: no agent could use a model, so it cannot change what such a harness reads
        (``dsh sessions list`` keeps working beside it)."""
        if not config.models:
            return
        from dsh._plugin_off import provider_off
        from dsh.llm._plugin_entries import limits_of
        from dsh.llm.providers import build_configured, build_each  # httpx when needed

        served, off = self.models.served(), provider_off(self.pm)
        if self._starts_agents:
            built = build_configured(config, served, self._env, off)
        else:
            built, problems = build_each(config, served, self._env, off)
            for problem in problems:
                log.warning(
                    "%s (ignored here: this command starts no agent; dsh run refuses it)",
                    problem.problem,
                )
        for model in built:
            self.models.add("config", model, model.name)
            self._config_models.append(model)
        for name, settings in config.models.items():  # a plugin's model: its limits
            if name in served:
                self.models.set_limits(name, limits_of(settings))

    async def __aenter__(self) -> Harness:
        if self._entered == "started":
            raise DshError(
                "this Harness is already started: a Harness is entered once (one `async with`)"
            )
        if self._entered == "stopped":
            raise DshError("this Harness has stopped: a Harness is entered once; make a new one")
        self._entered = "started"
        try:
            return await self._start()
        except BaseException:
            self._entered = "stopped"
            self._unfollow_late()  # failed before its task group: __aexit__ did not
            raise

    async def _start(self) -> Harness:
        from dsh._proxy_secrets import proxy_secrets
        from dsh._register_calls import checked
        from dsh._secrets import remember
        from dsh.config import add_settings

        late = self._late = StartedPlugins(self.pm)  # told of each start-up hook's call
        self.pm.dispatcher.listeners.append(late)
        late.begin("register_settings")
        self.relay.register_settings(
            checked("register_settings", partial(add_settings, self.settings))
        )
        self._config = self._load_config()
        source = self._config.source
        self.models.config_source = None if source == "<defaults>" else source
        late.begin("register_secrets")
        self.relay.register_secrets(checked("register_secrets", self.secret_variables.add))
        self._secrets = None  # with what was just registered
        self.secrets()  # read now, so that a log record quoting a key shows it hidden
        # log records look up the proxy variables in lower and upper case only: one of
        # another case (Http_Proxy) is remembered now, every name of the environment read
        remember(proxy_secrets())
        late.begin("register_history_reducers")
        self.relay.register_history_reducers(
            checked("register_history_reducers", self._add_reducer)
        )
        late.begin("register_models")
        self.relay.register_models(checked("register_models", self.models.add))
        self._add_config_models(self._config)
        late.begin("register_tools")
        self.relay.register_tools(checked("register_tools", self.tools.add))
        task_group = anyio.create_task_group()
        await task_group.__aenter__()
        self._task_group = task_group
        self._follow_observers()
        self.pm.dispatcher.listeners.append(self._follow_observers)
        self._agents = AgentRegistry(
            task_group=task_group,
            relay=self.relay,
            sessions=self.sessions,
            models=self.models,
            tools=self.tools,
            workspace=self.workspace,
            harness=self,
            env=self._env,
            starts_agents=self._starts_agents,
        )
        try:
            late.begin("harness_started")
            await self.relay.harness_started(self)
            for agent in self._config.agents if self._starts_agents else ():
                options = agent.agent_options(agent.model or self._config.default_model)
                await self._agents.create(agent.id, options=options, source="startup")
        except BaseException as exc:
            await self.__aexit__(type(exc), exc, exc.__traceback__)
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        task_group, self._task_group = self._task_group, None
        self._entered = "stopped"
        if task_group is None:
            return None
        try:
            with anyio.CancelScope(shield=True):
                try:
                    # no agent starts from now on (a plugin's harness_stopping, a task of
                    # the program): one started after dispose_all() began would keep the
                    # task group open forever; starts in flight end first, so none opens
                    # a store after harness_stopping closed it
                    await self.agents.close()
                    await self.agents.dispose_all()
                    with grace_started("harness exit"):
                        await self.relay.harness_stopping(self)
                finally:
                    for model in self._config_models:
                        await model.aclose()
        finally:
            # Every agent is disposed, so the group holds no task: leave it as if the body
            # had not raised, and the body's own exception propagates unwrapped (not as
            # an exception group). An agent task that crashed still raises here.
            self.pm.dispatcher.listeners.remove(self._follow_observers)
            self._unfollow_late()
            try:
                await task_group.__aexit__(None, None, None)
            finally:
                self.agents.mark_stopped()
        return None


def _check_config(config: object, config_text: str | None) -> None:
    """``Harness``'s ``config`` and ``config_text``: one of them, of a kind it reads."""
    from dsh.config import Config

    if config is not None and config_text is not None:
        raise TypeError(
            "Harness() takes config= or config_text=, not both: config= is a loaded Config "
            "or the path of a YAML file, config_text= the YAML itself"
        )
    if config is not None and not isinstance(config, (Config, str, os.PathLike)):
        raise TypeError(
            f"Harness(config=...) takes a loaded Config or the path of a YAML file, not "
            f"{a_kind(config)}; give YAML text as config_text= "
            "(yaml.safe_dump(settings) for a dict)"
        )
