"""``Permissions``: the ``tools_execute`` gate — decide, ask if needed, log, answer.

Runs ``tryfirst``, before the core executor. A denial is an error ``ToolResult`` with
the reason, so the tool never runs and the model reads why; an allowed call returns
None and the next impl (in the end the core executor) runs it. Every decision is
logged as a ``permission/decision`` event before the answer is returned.

It fails closed: any exception while deciding becomes a denial that names the
exception, and a decision that cannot be logged is not allowed.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final
from weakref import WeakKeyDictionary, ref

import anyio
from pydantic_core import to_json

from dsh import DshError, ToolCall, ToolResult, get_logger, hookimpl
from dsh.tools import Tool
from dsh_permissions import hookspecs
from dsh_permissions._approvals import (
    DECISION_EVENT,
    UNANSWERED,
    GrantLog,
    PermissionRequest,
    ask_front_ends,
    said,
)
from dsh_permissions._calls import _THE_TOOL, InvalidArguments, subjects_of
from dsh_permissions._decide import Policy, Verdict, decide
from dsh_permissions._gates import second_gate
from dsh_permissions._guarded import config_file, session_store
from dsh_permissions._outcome import EventData, Outcome, denial
from dsh_permissions._rule_names import check_own_rules, check_rule_names, linked_allows
from dsh_permissions._settings import PermissionSettings, PermissionsSection, validate_options
from dsh_permissions._subjects import Subject, ToolFacts

__all__ = ["Permissions"]

log = get_logger("dsh_permissions")
_FACTS_KEPT: Final = 256  # tools whose facts an agent's state remembers
#: the subjects of a call naming no path or command: the tool itself
_THE_TOOL_ONLY: Final = (_THE_TOOL,)


@dataclass(slots=True)
class _AgentState:
    """What the plugin keeps per agent: the compiled policy and the grants log."""

    settings: PermissionSettings | None = None
    policy: Policy | None = None
    #: the harness config the policy's config file was found from (see ``_policy``)
    config: object = None
    #: (plugin settings, harness section, JSON of the agent's raw options, the settings
    #: made from them): while the first three are unchanged, so is the last
    made: tuple[object, object, bytes, PermissionSettings] | None = None
    grants: GrantLog = field(default_factory=GrantLog)
    warned_bypass: bool = False
    #: tool name -> (the tool the registry gave, its facts)
    known: dict[str, tuple[Tool | None, ToolFacts]] = field(default_factory=dict)

    def facts(self, name: str, tool: Tool | None) -> ToolFacts:
        """``ToolFacts.of(name, tool)``, made again only when the registry's tool changed."""
        found = self.known.get(name)
        if found is None or found[0] is not tool:
            if len(self.known) >= _FACTS_KEPT:  # names a model made up, say
                self.known.clear()
            found = self.known[name] = (tool, ToolFacts.of(name, tool))
        return found[1]


class Permissions:
    """The permissions plugin. dsh loads one with no settings of its own from the
    entry point ``permissions``; each agent's ``options["permissions"]`` then holds
    its settings. Construct one with ``settings`` to set plugin-wide settings in code,
    and register it *instead of* the entry point: both together stop start-up (each
    would check, and ask about, every call). With ``select=["no:permissions"]`` (which needs the
    distribution installed: blocking a name no entry point has is an error), register
    it under another name (a plugin passed under a blocked name is refused).
    """

    dsh_hookspecs = hookspecs

    def __init__(self, settings: PermissionSettings | Mapping[str, Any] | None = None) -> None:
        if settings is not None and not isinstance(settings, PermissionSettings):
            settings = PermissionSettings.model_validate(settings)
        self.settings: PermissionSettings | None = settings
        self._states: WeakKeyDictionary[Any, _AgentState] = WeakKeyDictionary()
        #: the agent last checked (weakly) and its state: most calls come from it
        self._last: tuple[ref[Any], _AgentState] | None = None
        self._event = EventData()

    @hookimpl(tryfirst=True)
    async def tools_execute(
        self, agent: Any, call: ToolCall, turn: int, step: int
    ) -> ToolResult | None:
        """Allow (None: the call runs) or deny (an error result: it does not)."""
        try:
            outcome = await self._check(agent, call)
        except anyio.get_cancelled_exc_class():
            # aborted while deciding (a person was being asked): the call never runs,
            # and the log still says so (every checked call has its decision event)
            outcome = Outcome(
                Verdict("deny", None, "the turn was aborted before the call was decided")
            )
            not_run = getattr(agent, "call_not_run", None)
            if not_run is not None:  # its result says "not run", not "it may have run"
                not_run(call.id)
            with anyio.CancelScope(shield=True):
                await agent.session.emit(DECISION_EVENT, self._event(call, turn, step, outcome))
            raise
        except Exception as exc:
            log.exception("dsh-permissions: checking %s (call %s) failed", call.name, call.id)
            why = f"the permission check failed ({said(exc)}), so it fails closed"
            outcome = Outcome(Verdict("deny", None, why))
        try:
            await agent.session.emit(DECISION_EVENT, self._event(call, turn, step, outcome))
        except Exception as exc:
            log.exception("dsh-permissions: logging the decision on call %s failed", call.id)
            if outcome.verdict.decision == "allow":
                why = f"its permission decision could not be logged ({said(exc)})"
                outcome.verdict = Verdict("deny", None, why)
        if outcome.verdict.decision == "allow":
            return None
        return ToolResult(call_id=call.id, content=denial(call, outcome), is_error=True)

    @hookimpl
    def harness_started(self, harness: Any) -> None:
        """A second permission gate, or a rule misspelling a tool's name (it would match
        nothing), stops start-up."""
        why = second_gate(getattr(harness, "pm", None), Permissions)
        if why is not None:
            raise DshError(why)
        check_rule_names(harness, self.settings)

    @hookimpl
    def agent_created(self, agent: Any) -> None:
        """Check an agent's settings when it starts, not only at its first tool call:
        a problem is reported (naming the key) and every call of the agent is denied."""
        settings = self.settings_for(agent)
        if settings.mode == "bypass":
            self._warn_bypass(agent, self._state(agent))

    # -- deciding ---------------------------------------------------------------------

    def settings_for(self, agent: Any) -> PermissionSettings:
        """The settings in force for ``agent`` (see ``PermissionSettings.merged``)."""
        base = self.settings
        configured = _section(agent)
        if isinstance(configured, PermissionSettings):
            base = configured if base is None else base.merged(configured)
        options = getattr(agent, "options", None)
        own: PermissionSettings | None = None
        if isinstance(options, Mapping):
            # under the name the plugin's settings are registered by (the entry point's
            # `permissions`, or the name it was given): where dsh.yml checked them
            for key in _option_keys(agent):
                raw = options.get(key)
                if raw is not None:
                    who = str(getattr(agent, "id", "?"))
                    found = validate_options(raw, who, key)
                    tools = getattr(agent, "tools", None)
                    # a rule misspelling a tool would match nothing (an agent whose
                    # tools cannot be listed is not refused for that)
                    if callable(getattr(tools, "specs", None)):
                        check_own_rules(tools, who, key, found)
                    own = found if own is None else own.merged(found)
        if own is None:
            return base or PermissionSettings()
        return own if base is None else base.merged(own)

    def _warn_bypass(self, agent: Any, state: _AgentState) -> None:
        if not state.warned_bypass:
            state.warned_bypass = True
            who = getattr(agent, "id", "?")
            log.warning(
                "agent %r: permissions mode bypass: every tool call runs unasked "
                "unless a deny rule covers it",
                who,
            )

    def _state(self, agent: Any) -> _AgentState:
        last = self._last
        if last is not None and last[0]() is agent:
            return last[1]
        try:
            state = self._states.get(agent)
            if state is None:
                state = self._states[agent] = _AgentState()
            self._last = (ref(agent), state)
        except TypeError:  # an agent object that cannot be weakly referenced: no cache
            state = _AgentState()
        return state

    def _settings(self, agent: Any, state: _AgentState) -> PermissionSettings:
        """``settings_for(agent)``, made again only when what it is made of changed:
        the plugin's settings and the harness section (compared by identity; both are
        frozen) and the agent's raw options (by their JSON text, so a change made in
        place is seen, and ``1`` is never mistaken for ``true``). Settings registered
        under a name other than ``permissions`` (or under two names) are read from
        other option keys too: those are made again on every call."""
        harness = getattr(agent, "harness", None)
        section: PermissionSettings | None = None
        if harness is not None:
            name = None
            for each, model in harness.settings.items():
                if model is PermissionsSection:
                    if name is not None:
                        return self.settings_for(agent)
                    name = each
            if name is not None:
                if name != "permissions":
                    return self.settings_for(agent)
                found = harness.config.section(name)
                # no ABC check through pydantic's metaclass for the usual type
                if type(found) is PermissionsSection or isinstance(found, PermissionSettings):
                    section = found
        options = getattr(agent, "options", None)
        if type(options) is dict or isinstance(options, Mapping):  # a dict: no ABC check
            raw = options.get("permissions")
        else:
            raw = None
        try:
            text = to_json(raw)
        except Exception:  # not JSON: nothing to compare by, so never cached
            return self.settings_for(agent)
        made = state.made
        if made is not None and made[0] is self.settings and made[1] is section and made[2] == text:
            return made[3]
        settings = self.settings_for(agent)  # raises on invalid settings: nothing cached
        state.made = (self.settings, section, text, settings)
        return settings

    def _policy(self, agent: Any, state: _AgentState, paths: bool) -> Policy:
        """The policy of the agent's settings, bound to its workspace's real path.
        ``paths``: the call names paths or commands, so that path is resolved again; a
        call that names neither is decided by tool rules alone, which do not depend on
        it, and reuses the policy while the settings are the same."""
        settings = self._settings(agent, state)
        policy = state.policy
        if policy is not None and (state.settings is settings or state.settings == settings):
            if not paths:
                return policy
            root = _root(agent)
            # a config replaced (loaded from another file): its file is guarded now
            if policy.root == root and state.config is _config(agent):
                return policy
        else:
            root = _root(agent)
        state.config = _config(agent)
        policy = state.policy = Policy(settings, root, config_file(agent))
        state.settings = settings
        for why in linked_allows(getattr(agent, "tools", None), settings, root):
            log.warning("warning: agent %r: %s", getattr(agent, "id", "?"), why)
        return policy

    async def _check(self, agent: Any, call: ToolCall) -> Outcome:
        state = self._state(agent)
        tool = _lookup(agent, call.name)
        facts = state.facts(call.name, tool)
        paths = tool is not None and bool(facts.path_args or facts.command_args)
        policy = self._policy(agent, state, paths)
        mode = policy.mode
        if mode == "accept-edits" and facts.edits_files:  # the store is kept out of it
            policy = state.policy = policy.with_store(await session_store(agent))
        if mode == "bypass":
            self._warn_bypass(agent, state)
        grants = state.grants.until(agent.session, policy.root)
        subjects: Sequence[Subject]
        if not paths:  # the tool itself (what ``subjects_of`` gives such a call)
            # bypass checks only deny rules: with none for this tool there is nothing to see
            unchecked = mode == "bypass" and not policy.rules(facts, "deny")
            subjects = () if unchecked else _THE_TOOL_ONLY
        else:
            try:
                # the files commands read, for the read tool's deny and ask rules
                reads = policy.reads(mode) if facts.command_args else None
                unchecked = mode == "bypass" and not policy.rules(facts, "deny") and reads is None
                links = policy.has_patterns(facts)
                subjects = (
                    [] if unchecked else subjects_of(facts, tool, call, policy.root, links, reads)
                )
            except InvalidArguments as exc:
                if not (mode == "plan" and facts.mutating):
                    return Outcome(Verdict("deny", None, str(exc)), mode, unreadable=True)
                subjects = []
        verdict = decide(policy, mode, facts, subjects, grants)
        if verdict.decision != "ask":
            return Outcome(verdict, mode)
        return await self._ask(agent, call, verdict, policy)

    async def _ask(self, agent: Any, call: ToolCall, verdict: Verdict, policy: Policy) -> Outcome:
        settings = policy.settings
        asked = verdict.asked
        # What an explicit ask rule covers is asked about every time, and what cannot
        # be checked is never remembered: a call with such a part is asked about again
        # whatever "always" keeps, so it offers no "always" (nor keeps its other parts)
        remembered = [p.by == "mode" and p.subject.rememberable for p in asked]
        remember = (
            tuple((p.subject.kind, p.subject.value) for p in asked) if all(remembered) else ()
        )
        request = PermissionRequest(
            tool=call.name,
            call_id=call.id,
            arguments=call.arguments,
            mode=settings.mode,
            reason=verdict.reason,
            rule=verdict.rule,
            subjects=tuple((p.subject.kind, p.subject.value) for p in asked),
            remember=remember,
            timeout=settings.ask_timeout,
        )
        got = await ask_front_ends(agent, call, request, settings.ask_timeout)
        outcome = Outcome(verdict, settings.mode, got.front_end, asked=verdict.reason)
        answer = got.answer
        if answer is None:
            why = f"it needs a person's approval ({verdict.reason}), and {got.why}"
            outcome.verdict = Verdict("deny", verdict.rule, why, verdict.parts)
            return outcome
        outcome.answer = answer.choice
        by = f"the front end {got.front_end!r}"
        if answer.choice == "always":
            outcome.remember = request.remember
            outcome.workspace = policy.root
            why = f"the user allowed it for this session through {by}"
            outcome.verdict = Verdict("allow", verdict.rule, why, verdict.parts)
        elif answer.choice == "once":
            why = f"the user allowed it once through {by}"
            outcome.verdict = Verdict("allow", verdict.rule, why, verdict.parts)
        elif answer.message.startswith(UNANSWERED):  # the input ended, say: no one refused
            said = answer.message[len(UNANSWERED) :].strip()
            why = f"no one answered (asked through {by})" + (f": {said}" if said else "")
            outcome.verdict = Verdict("deny", verdict.rule, why, verdict.parts)
        else:  # deny, and any other choice (an answer altered after it was built)
            said = f": {answer.message}" if answer.message else ""
            why = f"the user refused it (asked through {by}){said}"
            outcome.verdict = Verdict("deny", verdict.rule, why, verdict.parts)
        return outcome


def _root(agent: Any) -> str:
    """The real path of the agent's workspace (the working directory if it has none),
    resolved for every call that names paths or commands: a kept policy is made again
    when it moved. (Comparing ``stat`` results
    instead, which follow symlinks, kept the old root after ``mv ws ws2 && ln -s ws2
    ws``: every path then resolved outside it, where no relative rule matches.)"""
    return os.path.realpath(os.fspath(getattr(agent, "workspace", None) or os.getcwd()))


def _config(agent: Any) -> object:
    """The agent's harness's config (None: no harness), as ``config_file`` reads it."""
    return getattr(getattr(agent, "harness", None), "config", None)


def _lookup(agent: Any, name: str) -> Tool | None:
    tools = getattr(agent, "tools", None)
    found = tools.get(name) if tools is not None else None
    return found if isinstance(found, Tool) else None


def _option_keys(agent: Any) -> list[str]:
    """The agent option keys that hold this plugin's per-agent settings: the names its
    settings model is registered under, and ``permissions`` (a plugin object registered
    under another name without registering settings reads that one)."""
    harness = getattr(agent, "harness", None)
    names = [n for n, m in harness.settings.items() if m is PermissionsSection] if harness else []
    return names if "permissions" in names else [*names, "permissions"]


def _section(agent: Any) -> PermissionSettings | None:
    """The harness's validated ``permissions:`` section (under whatever name this
    plugin's settings model was registered), or None."""
    harness = getattr(agent, "harness", None)
    if harness is None:
        return None
    for name, model in harness.settings.items():
        if model is PermissionsSection:
            section = harness.config.section(name)
            if type(section) is PermissionsSection:  # no ABC check through pydantic's metaclass
                return section
            return section if isinstance(section, PermissionSettings) else None
    return None
