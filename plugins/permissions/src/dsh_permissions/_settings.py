"""Settings: the mode, the allow / ask / deny rules and how long to wait for an answer.

They come from three places, merged in this order (see ``Permissions.settings_for``):
the plugin-wide settings (given to ``Permissions(...)``, or the ``permissions:``
section of ``dsh.yml`` once dsh-core hands sections to hooks), then the agent's own
``options["permissions"]``. An agent's settings add rules (a plugin-wide deny cannot
be lifted by one agent) and replace the mode and the timeout when they set them.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    ValidationError,
    ValidationInfo,
)

from dsh_permissions._rule_problems import registered_rule
from dsh_permissions._rules import parse_rule

__all__ = [
    "InvalidSettings",
    "Mode",
    "PermissionSettings",
    "PermissionsSection",
    "validate_options",
]

#: ``default``: rules decide; a mutating tool no rule allows is asked about.
#: ``accept-edits``: as default, and file edits inside the workspace are allowed.
#: ``plan``: read-only; every mutating tool is denied. ``bypass``: everything runs unasked,
#: except what a deny rule covers.
Mode = Literal["default", "accept-edits", "plan", "bypass"]


def _rule(text: str) -> str:
    parse_rule(text)
    return text.strip()


def _text(value: object) -> object:
    """A rule YAML read as a mapping (an unquoted ``bash(echo: hi)``: ``': '`` makes a
    key) is refused with the way out, not as "not a string"."""
    if isinstance(value, dict) and len(value) == 1:
        ((key, item),) = value.items()
        written = f"{key}: {'' if item is None else item}".strip()
        raise ValueError(
            f"a rule is text, but YAML read this one as a mapping ({written!r}: ': ' "
            "starts a value); quote the rule"
        )
    return value


def _registered(text: str, info: ValidationInfo) -> str:
    """With the harness in the validation context (options given in code), a rule
    naming a near miss of a registered tool, or a bad path pattern, is refused."""
    if info.context is None:
        return text
    return registered_rule(text, info)


RuleText = Annotated[
    str, Strict(), BeforeValidator(_text), AfterValidator(_rule), AfterValidator(_registered)
]


class PermissionSettings(BaseModel):
    """What the permissions plugin enforces (``permissions:`` in ``dsh.yml``, or an
    agent's ``options["permissions"]``)."""

    # strict field by field, as the other plugins' settings are: ``true`` is not 1 s nor
    # '5' a number (an int is still a float: YAML writes 30 for 30.0); the rule lists
    # stay lax, so a list (YAML's, or one given in code) makes their tuple
    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: Mode = "default"  # a Literal: only these strings, in any mode
    #: ``ToolName`` or ``ToolName(pattern)``; precedence is deny > ask > allow,
    #: whatever the order of the lists.
    allow: tuple[RuleText, ...] = ()
    ask: tuple[RuleText, ...] = ()
    deny: tuple[RuleText, ...] = ()
    #: Seconds to wait for a front end's answer (None: wait as long as it takes).
    ask_timeout: float | None = Field(default=300.0, gt=0, strict=True)

    def merged(self, own: PermissionSettings) -> PermissionSettings:
        """``own`` (an agent's settings) on top of these."""
        chosen = own.model_fields_set
        return PermissionSettings(
            mode=own.mode if "mode" in chosen else self.mode,
            allow=(*self.allow, *own.allow),
            ask=(*self.ask, *own.ask),
            deny=(*self.deny, *own.deny),
            ask_timeout=own.ask_timeout if "ask_timeout" in chosen else self.ask_timeout,
        )


class InvalidSettings(ValueError):
    """An agent's ``options["permissions"]`` is not valid; the message names the key."""


def validate_options(raw: object, agent_id: str, key: str = "permissions") -> PermissionSettings:
    """An agent's ``options[key]`` as settings, or InvalidSettings."""
    if isinstance(raw, PermissionSettings):
        return raw
    try:
        return PermissionSettings.model_validate(raw)
    except ValidationError as exc:
        problems = []
        for error in exc.errors(include_url=False, include_input=False):
            where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error["loc"])
            reason = error["msg"]
            if error["type"] == "value_error":  # a validator's own words
                reason = str(error.get("ctx", {}).get("error", reason))
            problems.append(f"options.{key}{where}: {reason}")
        raise InvalidSettings(
            f"the permissions settings of agent {agent_id!r} are invalid: " + "; ".join(problems)
        ) from None


class PermissionsSection(PermissionSettings):
    """The ``permissions:`` section of ``dsh.yml`` (what ``register_settings`` gives);
    hooks read it back through ``agent.harness.config``."""
