"""The values the threshold check before each model call works with, kept per agent.

The check runs before every model call: the settings, the context window, the output
the request reserves, the limit and the estimator are the same from one request to the
next until the harness loads another config, the agent's ``compaction`` or ``model``
option is replaced, the request names another model or ``max_tokens``, or the model's
info gives other limits. ``Check`` keeps them with what they were derived from, and
``kept_check`` compares that (one frame, no coroutine) before ``new_check`` derives them
again. The model found is kept only once found (as ``AgentState.model`` does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, final

from dsh import DshError, ModelRequest
from dsh_compaction import _host
from dsh_compaction._compact import limit_for
from dsh_compaction._settings import CompactionSettings
from dsh_compaction._warn import larger_window, no_window

if TYPE_CHECKING:
    from dsh.llm import Model, ModelInfo
    from dsh_compaction._state import AgentState
    from dsh_compaction._tokens import RequestEstimator

__all__ = ["Check", "kept_check", "limits", "new_check", "overflow_limits", "with_estimator"]

_UNSTARTED = object()  # a harness whose config cannot be read: nothing is kept


@final
class Check:
    """The check's values (``settings`` ... ``estimator``) and what they derive from
    (``config`` ... ``max_tokens``)."""

    __slots__ = (
        "config",
        "enabled",
        "estimator",
        "found",
        "info",
        "limit",
        "limits",
        "max_tokens",
        "model",
        "override",
        "reserve",
        "settings",
        "window",
    )

    def __init__(
        self,
        key: tuple[object, object, str | None, int | None],
        found: Model | None,
        settings: CompactionSettings,
        window: int | None,
        reserve: int,
    ) -> None:
        self.config, self.override, self.model, self.max_tokens = key
        #: the model found, its info and the info's limits as they were (a model may give
        #: other limits later)
        self.found = found
        self.info = found.info if found is not None else None
        self.limits = _info(self.info)
        self.settings = settings
        self.enabled = settings.enabled  # the settings are frozen: read once
        self.window = window
        self.reserve = reserve
        threshold = settings.threshold
        self.limit = 0.0 if window is None else limit_for(threshold * window, window, reserve)
        #: asked for (``compaction_token_counter``) when a request is first measured
        self.estimator: RequestEstimator | None = None


def _info(info: ModelInfo | None) -> tuple[int | None, int | None]:
    return (None, None) if info is None else (info.context_window, info.max_output_tokens)


def limits(
    agent: _host.Host, state: AgentState, settings: CompactionSettings, request: ModelRequest
) -> tuple[int | None, int]:
    """The context window (None: unknown), and the output the request reserves in it,
    which servers count against the window: its ``max_tokens``, else the model's
    ``max_output_tokens`` (what a provider sends then)."""
    window, reserve, _, _ = _limits(agent, state, settings, request)
    return window, reserve


def overflow_limits(
    agent: _host.Host, state: AgentState, settings: CompactionSettings, request: ModelRequest
) -> tuple[int | None, int, int | None]:
    """``limits``, and the window the settings or the model's info give (not one a
    server stated: ``_stated``)."""
    window, reserve, _, configured = _limits(agent, state, settings, request)
    return window, reserve, configured


def _limits(
    agent: _host.Host, state: AgentState, settings: CompactionSettings, request: ModelRequest
) -> tuple[int | None, int, Model | None, int | None]:
    """``limits``, the model found, and the window configured: the ``context_window``
    setting, else the model's info's, the smaller of the two when both give one (a
    request past the model's own window is refused: ``larger_window``); a smaller one a
    server stated for the model (``AgentState.windows``) is the window."""
    found = state.model(agent, request.model)
    info = found.info if found is not None else None
    configured = settings.context_window
    own = info.context_window if info is not None else None
    if configured is None or (own is not None and own < configured):
        configured = own
    window = configured
    if state.windows:
        stated = state.windows.get(request.model or agent.options.get("model"))
        if stated is not None and (window is None or stated < window):
            window = stated
    reserve = request.max_tokens or (info.max_output_tokens if info is not None else None)
    return window, reserve or 0, found, configured


def _config(agent: Any) -> object:
    """The harness's config object (None: no harness), ``_UNSTARTED`` before it starts."""
    harness = getattr(agent, "harness", None)
    if harness is None:
        return None
    try:
        return harness.config
    except DshError:
        return _UNSTARTED


def kept_check(agent: Any, state: AgentState, request: ModelRequest) -> Check | None:
    """The agent's kept ``Check``, if it still holds for ``request``."""
    check = state.check
    if check is None:
        return None
    config = _config(agent)
    if config is _UNSTARTED:
        return None
    options = agent.options
    fields = request.__dict__  # one read: each attribute of a model costs a lookup
    if (
        check.config is not config
        or check.override is not options.get("compaction")
        or check.max_tokens != fields["max_tokens"]
        or check.model != (fields["model"] or options.get("model"))
        or check.found is None
        or ((info := check.found.info) is not check.info and _info(info) != check.limits)
    ):
        return None
    return check


def new_check(agent: Any, state: AgentState, request: ModelRequest) -> Check:
    """The check's values derived again; kept when the model was found (a model not
    registered yet may be registered by a plugin later) and the harness is started."""
    settings = state.settings(agent)
    window, reserve, found, _ = _limits(agent, state, settings, request)
    config = _config(agent)
    options = agent.options
    name = request.model or options.get("model")
    key = (config, options.get("compaction"), name, request.max_tokens)
    check = Check(key, found, settings, window, reserve)
    unknown = window is None and found is not None and settings.enabled
    if unknown and name not in state.windowless:  # once per agent and model
        state.windowless.add(name)
        no_window(agent.id, name)
    setting, own = settings.context_window or 0, _info(check.info)[0] or 0
    if 0 < own < setting and name not in state.window_warned:  # once per agent and model
        state.window_warned.add(name)
        larger_window(agent.id, name, setting, own)
    state.check = check if found is not None and config is not _UNSTARTED else None
    return check


async def with_estimator(
    agent: Any, state: AgentState, check: Check, request: ModelRequest
) -> RequestEstimator:
    """``check``'s estimator, asked for now (one per model and characters per token)."""
    estimator = await state.estimator(agent, check.settings, request.model)
    check.estimator = estimator
    return estimator
