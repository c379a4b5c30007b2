"""Agent options given in code (``agents.create(options=...)``), checked by the rules
``dsh.yml``'s ``agents[].options`` follow, so a typo in a program is refused as it is in
the file instead of being ignored."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from dsh._config_cross import set_model_names
from dsh._config_errors import missing_hint, reason, typo_instead
from dsh._config_keys import ignored_key, layered, unknown_key
from dsh._config_local import check_local
from dsh._config_secrets import free_misplaced, key_like_model, key_like_name, misplaced_key
from dsh._config_yaml import Loc
from dsh._declared_secrets import declared_secrets
from dsh._entry_points import FIRST_PARTY
from dsh._options import CORE_OPTIONS, core_option_problem, option_typo
from dsh._plugin_settings import not_installed, raised
from dsh._quoted import did_you_mean, shown
from dsh._secrets import get_logger
from dsh._stored_options import from_store, stored_note
from dsh.errors import DshError

if TYPE_CHECKING:
    from dsh.harness import Harness
    from dsh.persistence import StoredSession

__all__ = ["check_options", "check_stored", "model_problem", "options_problem"]

log = get_logger("dsh.config")


def check_options(
    harness: Harness,
    agent_id: str,
    options: dict[str, Any] | None,
    *,
    resumed: bool = False,
    stored: StoredSession | None = None,
    kept: str | None = None,
) -> None:
    """Options a caller gave in code, checked by the rules of ``agents[].options`` (the
    config's own agents were checked when it loaded): a ``DshError`` naming the agent.
    ``resumed``: the options of a session being continued (often its stored ones), whose
    plugin settings may name a model this harness does not register (a summariser of
    another workspace): not refused for that, or the session could not be continued.
    ``stored``: that session, when read already: a problem with an option it holds (and
    the config does not set) names it and the way out (``dsh._stored_options``).
    ``kept``: ``options`` are ``stored``'s own, taken whole by a resume in code given
    none (``check_stored``), as stored with session ``kept`` (a fork's source): each is
    the session's, and ``options=`` is the way out. Core options are checked here too
    (a resume's before it claims the session). Not resumed, ``dsh.yml``'s plugin
    settings naming ``local`` are checked too: it must be registered (``check_local``)."""
    if options:
        pm = harness.pm
        config = harness.config

        def theirs(key: str) -> str | None:
            """The id of the session said to store option ``key``, when it is ``stored``'s."""
            if stored is None or not (kept or from_store(config, stored, key, options[key])):
                return None
            return kept or stored.id

        def note(key: str) -> str:
            """Said after a problem with option ``key``: whose it is, when ``stored``'s."""
            if stored is None or theirs(key) is None:
                return ""
            off = (
                "left out"
                if pm.is_left_out(key) and key not in harness.settings
                else "not installed"
                if key in FIRST_PARTY and pm.is_missing(key)
                else None
            )
            return stored_note(config, stored, key, off=off, kept=kept)

        def turned_off(key: str) -> None:
            _warn_off(harness, agent_id, key, options[key], theirs(key))

        for key, value in options.items():  # one at a time: the stored ones say so
            problem = options_problem(
                {key: value},
                harness.settings,
                config.raw,
                pm.is_left_out,
                pm.is_blocked,
                config.source,
                None if resumed else harness.models.names(),
                # a validator may check names against what is registered (docs/hooks.md)
                None if resumed else {"harness": harness, "agent_id": agent_id},
                turned_off,
                missing=pm.is_missing,
            )
            if problem is None:  # before a resume claims its session
                problem = core_option_problem({key: value})
            if problem is not None:
                raise DshError(f"agent {agent_id!r}: {problem}{note(key)}")
        problem = model_problem(options.get("model"), harness.models.names())
        if problem is not None:  # a command line's resume chose its model (-m, or dsh.yml)
            raise DshError(f"agent {agent_id!r}: {problem}{note('model') if kept else ''}")
    if not resumed:
        check_local(harness, agent_id, options)


def check_stored(
    harness: Harness, agent_id: str, stored: StoredSession, options: dict[str, Any], named: str
) -> None:
    """The options ``stored`` holds (``options``: read from its meta), which a resume in
    code given none takes whole, checked as ``agents.create`` checks what it is given: a
    bad one is a ``DshError`` naming session ``named`` (``stored``'s id; a fork's source)
    and ``options=``, which replaces them; one for a plugin turned off is warned about."""
    check_options(harness, agent_id, options, resumed=True, stored=stored, kept=named)
    hidden = _secret_placeholder(harness, options)
    if hidden is not None:  # the plugin would get "***" for its token, saying nothing
        raise DshError(
            f"agent {agent_id!r}: option {hidden!r} holds a secret (a SecretStr setting) "
            f"that was stored with session {named} as *** (dsh never stores a secret it "
            "holds): pass options= with it to resume"
        )


def _secret_placeholder(harness: Harness, options: Mapping[str, Any]) -> str | None:
    """The first plugin key of ``options`` whose settings hold a ``SecretStr`` that is
    ``***``: the place of a secret cleared when the session was stored
    (``dsh._stored_meta``)."""
    for key, value in options.items():
        model = harness.settings.get(key)
        if model is None or not isinstance(value, Mapping):
            continue
        try:
            checked = model.model_validate(layered(harness.config.raw.get(key), value))
        except Exception:  # refused above when it is the stored options' fault
            continue
        if "***" in declared_secrets(checked):
            return key
    return None


def _warn_off(harness: Harness, agent_id: str, key: str, value: Any, session: str | None) -> None:
    """Option ``key`` is for a plugin turned off (-p no:KEY): said once. Options of an
    agent of dsh.yml were said to be ignored, with their place, when it loaded; a
    stored session's (``session``: its id, when the option is its own) are said to be
    its own."""
    if session is not None:
        log.warning(
            "session %s: its %r options are ignored: plugin %r is turned off (-p no:%s)",
            *(session, key, key, key),
        )
    elif not any(
        entry.id == agent_id and entry.own_options().get(key, _NONE) == value
        for entry in harness.config.agents
    ):
        _ignored(key)


def _ignored(key: str) -> None:
    log.warning("option %r is ignored: plugin %r is turned off (-p no:%s)", key, key, key)


_NONE = object()  # what no option equals


def options_problem(
    options: Mapping[str, Any],
    settings: Mapping[str, type[BaseModel]],
    sections: Mapping[str, Any],
    left_out: Callable[[str], bool] = lambda name: False,
    blocked: Callable[[str], bool] = lambda name: False,
    source: str = "<defaults>",
    models: Sequence[str] | None = None,
    context: Mapping[str, Any] | None = None,
    turned_off: Callable[[str], None] = _ignored,
    missing: Callable[[str], bool] = lambda name: False,
) -> str | None:
    """What is wrong with the first bad plugin key of ``options``: a key named
    after a plugin with ``settings`` must be valid for its settings model over its
    section of the file (``sections``: the YAML as parsed, read from ``source``), with
    no key it would ignore and no required field that neither gives;
    a key named after an installed plugin that does not run (``left_out``) would apply
    to nothing: refused, or warned about when the plugin was turned off (``blocked``);
    another key is free unless it is a typo of a core option or of such a
    plugin's name. A ``ModelName`` field the options set must name one of ``models``
    (the harness's registered models; None: not checked). ``context``: pydantic's
    validation context for the settings models; ``turned_off``: told each key for a plugin
    turned off (by default: a warning). ``missing``: a plugin is not installed: a key
    for one of dsh's own is refused (its deny rules would apply to nothing), as
    ``dsh.yml``'s are. The core's own keys are checked where the agent is built."""
    for key, value in options.items():
        if key in CORE_OPTIONS:
            continue
        model = settings.get(key)
        misplaced = None if model is not None else misplaced_key(key, value)
        if misplaced is not None:  # options are stored with the session
            return f"option {key!r}: {misplaced}"
        if model is None and left_out(key):
            if blocked(key):
                turned_off(key)
                continue
            return (
                f"option {key!r}: plugin {key!r} is installed but not loaded, so nothing "
                "would apply these settings"
            )
        if model is None and key in FIRST_PARTY and missing(key):
            if blocked(key):
                turned_off(key)
                continue
            return not_installed("option", key)
        if model is None:
            hint = option_typo(key, [*CORE_OPTIONS, *settings])
            if hint:
                return f"unknown option {key!r} (not a core option or a loaded plugin's name){hint}"
            nested = free_misplaced(key, value)
            if nested is not None:  # stored with the session as it is
                return f"option {_dotted((key, *nested[0]))}: {nested[1]}"
            continue
        if isinstance(value, BaseModel) and issubclass(model, type(value)):
            # the plugin's own settings object (its model or a base), built valid
            problem = _unknown_model(key, value, None, models)
            if problem is not None:
                return problem
            continue
        value = {} if value is None else value
        try:
            checked = model.model_validate(layered(sections.get(key), value), context=context)
        except ValidationError as exc:
            # in Python's words (this is code), with the config's hints; only required
            # fields left out: a key the model would drop (a typo of one?) comes first
            unknown = typo_instead(exc, model, value, (key,))
            if unknown is not None:
                return f"option {_dotted(unknown)}: {unknown_key(unknown, model, 1)}"
            errors = exc.errors(include_url=False)
            err = next((e for e in errors if e["type"] != "missing"), errors[0])
            loc: Loc = (key, *err["loc"])
            why = reason(err, loc, model, 1, hint=missing_hint(key, source), yaml=False)
            return f"option {_dotted(loc)}: {why}"
        except Exception as exc:  # a validator raising what pydantic lets through
            return f"option {key!r}: {raised(model, key, exc)}"
        ignored = ignored_key(checked, value, (key,))
        if ignored is not None:
            return f"option {_dotted(ignored)}: {unknown_key(ignored, model, 1)}"
        problem = _unknown_model(key, checked, value, models)
        if problem is not None:
            return problem
    return None


def _unknown_model(
    key: str, checked: BaseModel, given: object, models: Sequence[str] | None
) -> str | None:
    """A ``ModelName`` field of option ``key`` (``checked``: its settings, over the
    plugin's section) that ``given`` sets (all that ``checked`` sets, when None: the
    settings object given whole) to a name none of ``models`` has, as ``dsh.yml``'s
    ``agents[].options`` are checked against ``models:``. ``local`` counts only when it
    is registered: nothing starts the bundled server for a plugin's setting. The
    section's own names were checked when the config loaded."""
    if models is None:
        return None
    known = list(models)
    for loc, name in set_model_names(checked):
        if name is None or name in known:
            continue
        if given is not None and not (isinstance(given, Mapping) and loc[0] in given):
            continue
        registered = ", ".join(models) or "none"
        if key_like_name(name):  # a key pasted there: not shown
            why = key_like_model(f"registered: {registered}")
        else:
            hint = did_you_mean(name, sorted(known))
            why = f"unknown model {shown(name)} (registered: {registered}){hint}"
        return f"option {_dotted((key, *loc))}: {why}"
    return None


def _dotted(loc: Sequence[str | int]) -> str:
    """``permissions.allow[1]``: as docs and the plugins' own messages write a place."""
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)[1:]


def model_problem(model: object, registered: Sequence[str]) -> str | None:
    """A ``model`` option naming no registered model (a typo would fail every turn with
    NO_MODEL, after the agent had started); None when it names one, or none is given
    (the config's ``model:`` then applies)."""
    if not isinstance(model, str) or model in registered:
        return None
    known = ", ".join(registered) or "none"
    if key_like_name(model):  # a key pasted there: not shown
        return key_like_model(f"registered: {known}")
    hint = did_you_mean(model, registered)
    return f"model {shown(model)} is not registered (registered: {known}){hint}"
