"""The decision: a mode, the rules and a call's subjects in; allow, ask or deny out.

For each subject, in this order: a matching deny rule denies; a matching ask rule
asks; a subject that cannot be checked asks; an allow rule that matches every allow
reading allows; otherwise the mode decides (non-mutating tools run, file edits inside
the workspace run in ``accept-edits``, a remembered "always" answer runs, anything
else is asked about). The call is denied if any subject is, asked about if any is,
and allowed only when every subject is. ``plan`` denies mutating tools before any of
this; ``bypass`` allows everything that no deny rule covers.
"""

from __future__ import annotations

from collections.abc import Container, Iterable
from dataclasses import dataclass
from typing import Final, Literal

from dsh_permissions._covers import allowed_by, continued, hits, read_hit
from dsh_permissions._guarded import guarded
from dsh_permissions._looked import Seen, one_resolution, seen, unchanged
from dsh_permissions._reasons import (
    assumed,
    below,
    could_cover,
    describe,
    open_why,
    plan_reason,
    read_note,
    reads_why,
    unclear_read,
)
from dsh_permissions._rules import Action, Rule
from dsh_permissions._settings import Mode, PermissionSettings
from dsh_permissions._subjects import Subject, ToolFacts

__all__ = ["Decision", "Grant", "Part", "Policy", "Verdict", "decide"]

Decision = Literal["allow", "ask", "deny"]
#: (tool, subject kind, subject value): what an "always" answer remembers
Grant = tuple[str, str, str]
_ACTIONS: Final[tuple[Action, ...]] = ("deny", "ask", "allow")
#: the tool whose deny and ask rules also cover the files commands read
_READ: Final = ToolFacts("read", True, False, ("path",), reads_paths=True)
_REMEMBERED: Final = 512  # verdicts kept per policy


@dataclass(frozen=True, slots=True)
class Part:
    """The decision on one subject and what made it."""

    subject: Subject
    decision: Decision
    by: Literal["rule", "mode", "problem", "grant"]
    why: str
    rule: Rule | None = None


@dataclass(frozen=True, slots=True)
class Verdict:
    decision: Decision
    #: the rule that decided, as ``action: source`` (None: the mode decided)
    rule: str | None
    reason: str
    parts: tuple[Part, ...] = ()

    @property
    def asked(self) -> tuple[Part, ...]:
        return tuple(p for p in self.parts if p.decision == "ask")


#: a kept verdict, and the looks on disk that made it (``_looked``)
_Kept = tuple[Verdict, Seen]


class Policy:
    """The rules of one settings object, compiled against one workspace root."""

    __slots__ = (
        "_by_tool",
        "_patterns",
        "_rules",
        "_tool_verdicts",
        "_verdicts",
        "config",
        "mode",
        "root",
        "settings",
        "store",
    )

    def __init__(
        self,
        settings: PermissionSettings,
        root: str,
        config: frozenset[str] = frozenset(),
        store: str | None = None,
    ) -> None:
        self.settings = settings
        #: ``settings.mode``, read on every call (a slot, not a pydantic attribute)
        self.mode: Mode = settings.mode
        self.root = root
        #: the real paths of the config file these settings came from: accept-edits
        #: does not let the agent rewrite the rules that bind it
        self.config = config
        #: the real path of the session store (None: unknown): accept-edits does not
        #: let the agent forge the "always" answers read back from its logs
        self.store = store
        self._rules = {
            a: [Rule.compile(a, s, root) for s in getattr(settings, a)] for a in _ACTIONS
        }
        self._by_tool: dict[tuple[str, bool, Action], list[Rule]] = {}
        #: verdicts that depend only on the policy, their key and what the file system
        #: showed the decision (kept with them: see ``decide``)
        self._verdicts: dict[tuple[Mode, ToolFacts, tuple[Subject, ...]], _Kept] = {}
        #: (mode, tool name) -> (facts, subject, verdict, looks) of a kept verdict on a
        #: call with one ``tool`` subject, found by the identity of those objects (no
        #: dataclass hash)
        self._tool_verdicts: dict[tuple[Mode, str], tuple[ToolFacts, Subject, _Kept]] = {}
        #: (tool name, reads paths) -> ``_unchecked(self, tool)``
        self._patterns: dict[tuple[str, bool], Rule | None] = {}

    def with_store(self, store: str | None) -> Policy:
        """This policy, with ``store`` as the session store (itself if it already is)."""
        if store == self.store:
            return self
        return Policy(self.settings, self.root, self.config, store)

    def has_patterns(self, tool: ToolFacts) -> bool:
        """Whether a deny or ask rule with a pattern applies to ``tool``."""
        patterns = self._patterns
        key = (tool.name, tool.reads_paths)
        if key in patterns:
            return patterns[key] is not None
        if len(patterns) >= _REMEMBERED:  # names a model made up, say
            patterns.clear()
        found = patterns[key] = _unchecked(self, tool)
        return found is not None

    def reads(self, mode: Mode) -> bool | None:
        """Whether the files commands read are looked for: None when no rule of the
        ``read`` tool could cover them (no deny rule; in a mode other than bypass, no
        ask rule either), True when such a rule has a pattern (the symlinks below a
        directory a command reads are then looked for too), False otherwise."""
        actions: tuple[Action, ...] = ("deny",) if mode == "bypass" else ("deny", "ask")
        rules = [r for a in actions for r in self.rules(_READ, a)]
        if not rules:
            return None
        return any(r.pattern is not None for r in rules)

    def rules(self, tool: ToolFacts, action: Action) -> list[Rule]:
        """The ``action`` rules that apply to calls of ``tool`` (see ``Rule.applies_to``)."""
        key = (tool.name, tool.reads_paths, action)
        found = self._by_tool.get(key)
        if found is None:
            found = self._by_tool[key] = [
                r for r in self._rules[action] if r.applies_to(tool.name, tool.reads_paths)
            ]
        return found


def decide(
    policy: Policy,
    mode: Mode,
    facts: ToolFacts,
    subjects: Iterable[Subject],
    grants: Container[Grant],
) -> Verdict:
    if mode == "bypass":
        with one_resolution():  # each pattern's directory resolved once for the call
            return _bypass(policy, facts, subjects)
    if mode == "plan" and facts.mutating:
        return Verdict("deny", None, plan_reason(facts, bool(policy.rules(facts, "allow"))))
    # Subjects are computed fresh for every call (paths are resolved then), so a
    # verdict is a pure function of the policy, the mode, the facts, the subjects, the
    # grants and what the decision looked at on disk besides (where each pattern's
    # directory leads now, a venv's marker: ``_looked``). Deny verdicts and allow
    # verdicts that no grant made do not depend on the grants: those are kept, with
    # those looks, and used again while each look finds the same (grants can only turn
    # an ask into an allow).
    chosen = tuple(subjects)
    # A call naming no path or command has one shared ``tool`` subject and the facts
    # its agent keeps per tool: the very objects of a kept verdict decide it again.
    one = chosen[0] if len(chosen) == 1 and chosen[0].kind == "tool" else None
    if one is not None:
        found = policy._tool_verdicts.get((mode, facts.name))
        if found is not None and found[0] is facts and found[1] is one:
            verdict, looks = found[2]
            if not looks or unchanged(looks):
                return verdict
    key = (mode, facts, chosen)
    verdicts = policy._verdicts
    kept = verdicts.get(key)
    if kept is None or (kept[1] and not unchanged(kept[1])):
        with one_resolution() as looked:
            verdict = _verdict(tuple(_judge(policy, mode, facts, s, grants) for s in chosen))
        granted = any(p.by == "grant" for p in verdict.parts)
        if verdict.decision == "ask" or (verdict.decision == "allow" and granted):
            return verdict
        if len(verdicts) >= _REMEMBERED:
            verdicts.clear()
        kept = verdicts[key] = (verdict, seen(looked))
    if one is not None:
        by_identity = policy._tool_verdicts
        if len(by_identity) >= _REMEMBERED:
            by_identity.clear()
        by_identity[(mode, facts.name)] = (facts, one, kept)
    return kept[0]


def _bypass(policy: Policy, facts: ToolFacts, subjects: Iterable[Subject]) -> Verdict:
    """Nothing is asked about; deny rules still deny (an agent that sets ``bypass``
    cannot lift a plugin-wide deny). What cannot be checked against them (a command
    that cannot be split, a value only the shell knows) is denied: other modes would
    ask, and bypass asks nobody."""
    rules = policy.rules(facts, "deny")
    for subject in subjects:
        for rule in rules:
            if hits(rule, subject):
                why = (
                    f"the rule '{rule}' covers {describe(facts, subject)}"
                    f"{assumed(rule, facts, subject)}{read_note(rule, facts)}; deny rules "
                    "hold in bypass mode too"
                )
                return Verdict("deny", str(rule), why, (Part(subject, "deny", "rule", why, rule),))
        if (extended := continued(rules, subject)) is not None:
            why = (
                f"{describe(facts, subject)}: {open_why(extended)}; bypass mode asks nobody, "
                "so it does not run"
            )
            return Verdict(
                "deny", str(extended), why, (Part(subject, "deny", "rule", why, extended),)
            )
        read_rules = policy.rules(_READ, "deny") if subject.reads else []
        if (found := read_hit(read_rules, subject)) is not None:
            rule, read = found
            why = f"{reads_why(rule, facts, subject, read)}; deny rules hold in bypass mode too"
            return Verdict("deny", str(rule), why, (Part(subject, "deny", "rule", why, rule),))
        if read_rules and (unread := unclear_read(subject, policy.root)) is not None:
            why = (
                f"{describe(facts, subject)}: {unread}, so what it reads cannot be checked "
                f"against the deny rule '{read_rules[0]}'; bypass mode asks nobody, so it "
                "does not run"
            )
            rule = read_rules[0]
            return Verdict("deny", str(rule), why, (Part(subject, "deny", "rule", why, rule),))
        unclear = subject.problem or subject.unknown
        # a command the plugin cannot split may read any file: the read deny rules too
        # (a value only the shell knows is checked against them as a read, above)
        against = rules
        if not rules and subject.problem is not None and subject.kind == "command":
            against = policy.rules(_READ, "deny")
        if against and unclear is not None:
            why = (
                f"{describe(facts, subject)}: {unclear}, so it cannot be checked against "
                f"the deny rule '{against[0]}'; bypass mode asks nobody, so it does not run"
            )
            return Verdict(
                "deny", str(against[0]), why, (Part(subject, "deny", "rule", why, against[0]),)
            )
    return Verdict("allow", None, "bypass mode: a call no deny rule covers runs unasked")


def _verdict(parts: tuple[Part, ...]) -> Verdict:
    for part in parts:
        if part.decision == "deny":
            return Verdict("deny", _shown(part.rule), part.why, parts)
    asked = [p for p in parts if p.decision == "ask"]
    if asked:
        rule = next((p.rule for p in asked if p.rule is not None), None)
        return Verdict("ask", _shown(rule), "; ".join(dict.fromkeys(p.why for p in asked)), parts)
    rule = next((p.rule for p in parts if p.rule is not None), None)
    return Verdict("allow", _shown(rule), "; ".join(dict.fromkeys(p.why for p in parts)), parts)


def _shown(rule: Rule | None) -> str | None:
    return None if rule is None else str(rule)


def _judge(
    policy: Policy, mode: Mode, facts: ToolFacts, subject: Subject, grants: Container[Grant]
) -> Part:
    what = describe(facts, subject)
    for action in ("deny", "ask"):
        for rule in policy.rules(facts, action):
            if hits(rule, subject):
                why = f"the rule '{rule}' covers {what}{assumed(rule, facts, subject)}"
                why += below(rule, subject) + read_note(rule, facts)
                return Part(subject, action, "rule", why, rule)
        if subject.reads and (found := read_hit(policy.rules(_READ, action), subject)):
            rule, read = found
            return Part(subject, action, "rule", reads_why(rule, facts, subject, read), rule)
    rules = [*policy.rules(facts, "deny"), *policy.rules(facts, "ask")]
    if (extended := continued(rules, subject)) is not None:
        # xargs input or a find file name may make it a command the rule covers: it
        # is asked about (bypass denies), even under a rule allowing every call
        return Part(subject, "ask", "problem", f"{what}: {open_why(extended)}")
    if subject.problem is not None:
        return Part(subject, "ask", "problem", f"{what}: {subject.problem}")
    if subject.reads and (unread := unclear_read(subject, policy.root)) is not None:
        # a file only the shell knows (cat $F) cannot be checked against the read
        # tool's patterns: even a rule allowing every call must not let it past them
        strict = _unchecked(policy, _READ)
        if strict is not None:
            why = f"{what}: {unread}, so what it reads cannot be checked against '{strict}'"
            return Part(subject, "ask", "problem", why)
    if subject.unknown is not None:
        # A value only the shell knows cannot be checked against the tool's deny and
        # ask patterns (rm${IFS}-rf misses 'rm *'): even a rule allowing every call
        # of the tool must not let it past them. Other modes ask; bypass denies.
        strict = _unchecked(policy, facts)
        if strict is not None:
            rules = [*policy.rules(facts, "deny"), *policy.rules(facts, "ask")]
            named = could_cover(rules, subject)
            if named is None:  # asked all the same: the value is unknown
                why = f"{what}: {subject.unknown}, so no rule can allow it"
            else:
                why = (
                    f"{what}: {subject.unknown}, so it cannot be checked against the rule '{named}'"
                )
            return Part(subject, "ask", "problem", why)
    allowed = allowed_by(policy.rules(facts, "allow"), subject)
    if allowed is not None:
        return Part(subject, "allow", "rule", f"the rule '{allowed}' allows {what}", allowed)
    if not facts.mutating:
        return Part(subject, "allow", "mode", f"{what} changes nothing")
    if mode == "accept-edits" and facts.edits_files and subject.kind == "path" and subject.inside:
        kept = guarded(
            subject.allow, subject.directory, policy.config, policy.store, root=policy.root
        )
        if kept is None:
            return Part(
                subject, "allow", "mode", f"accept-edits allows {what} inside the workspace"
            )
        if subject.rememberable and (facts.name, subject.kind, subject.value) not in grants:
            return Part(subject, "ask", "mode", f"{what}: accept-edits does not cover {kept}")
    if subject.rememberable and (facts.name, subject.kind, subject.value) in grants:
        return Part(subject, "allow", "grant", f"{what} was allowed for this session")
    if subject.unknown is not None:
        return Part(subject, "ask", "mode", f"{what}: {subject.unknown}, so no rule can allow it")
    if not facts.known:
        return Part(subject, "ask", "mode", f"{facts.name!r} is not a registered tool")
    return Part(subject, "ask", "mode", f"no rule allows {what}")


def _unchecked(policy: Policy, tool: ToolFacts) -> Rule | None:
    """The first deny or ask rule of ``tool`` with a pattern, which a value unknown
    until run time cannot be checked against (a rule without one covers it anyway)."""
    for action in ("deny", "ask"):
        for rule in policy.rules(tool, action):
            if rule.pattern is not None:
                return rule
    return None
