"""The ``compaction:`` settings: one pydantic model, validated by dsh's config loader.

An agent's settings are layered: the plugin's defaults, then the harness's
``compaction:`` section of dsh.yml, then the agent option ``compaction`` (a mapping of
the same keys), so one agent can compact differently from the others.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from dsh import DshError, ModelName

__all__ = ["CompactionSettings", "layer_settings"]


#: The most characters per token ``chars_per_token`` may say: real tokenizers give
#: about 2 to 6 (English prose ~4, code ~3, long words and identifiers up to ~6).
MAX_CHARS_PER_TOKEN = 16


class CompactionSettings(BaseModel):
    """Settings of dsh-compaction (the ``compaction:`` section of dsh.yml)."""

    # strict, as the core's options are: '0.5' is not a number nor 'yes' a yes/no (an
    # int is still a float: YAML writes 30 for 30.0)
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    #: Compact automatically (over the threshold, and on a context-window error).
    #: ``compact_now`` works either way.
    enabled: bool = True
    #: Compact when the request's estimate passes this share of the context window.
    threshold: float = Field(default=0.8, gt=0, le=1)
    #: The context window in tokens; default: what the model's info says.
    context_window: int | None = Field(default=None, gt=0)
    #: Tokens of recent history kept verbatim; default: ``tail_ratio`` of the window.
    #: Either is capped at half the room the history has below the limit.
    tail_tokens: int | None = Field(default=None, gt=0)
    tail_ratio: float = Field(default=0.3, gt=0, lt=1)
    #: Old tool results longer than this many characters are pruned first, without a
    #: model call (replaced by a stub); 0 turns pruning off.
    prune_chars: int = Field(default=2000, ge=0)
    #: Keep the turn's task verbatim when it falls in the summarised region (so a long
    #: turn never loses it): the prompt that opened the turn, then its steering, newest
    #: first, while together they fit in the tail budget, which they are taken from
    #: (the tail shrinks to make room for them; ``_task.task_marks``).
    keep_last_user_message: bool = True
    #: The summariser model (a model of dsh.yml, checked at load); default: the
    #: agent's model.
    model: ModelName | None = None
    #: Instructions for the summariser; default: the built-in structured prompt (a
    #: blank one is refused: the summariser would get no instructions, silently).
    prompt: str | None = None
    #: The summariser's output limit (at most a quarter of its window and its model's
    #: ``max_output_tokens``).
    max_summary_tokens: int = Field(default=2048, gt=0)
    #: Seconds the whole summarisation may take before it is given up.
    timeout: float = Field(default=120.0, gt=0)
    #: The default token heuristic's characters per token (finite, at most
    #: ``MAX_CHARS_PER_TOKEN``: a larger value counts every request as nearly empty,
    #: and compaction would never run).
    chars_per_token: float = Field(default=4.0, gt=0, allow_inf_nan=False)

    @field_validator("prompt")
    @classmethod
    def _not_blank(cls, prompt: str | None) -> str | None:
        if prompt is not None and not prompt.strip():
            raise ValueError(
                "is blank: the summariser would get no instructions; leave the key out "
                "for the built-in prompt"
            )
        return prompt

    @field_validator("chars_per_token")
    @classmethod
    def _like_a_tokenizer(cls, chars: float) -> float:
        if chars > MAX_CHARS_PER_TOKEN:
            raise ValueError(
                f"{chars:g} is too many: at most {MAX_CHARS_PER_TOKEN} (tokenizers give about "
                "2 to 6 characters per token; a larger value counts every request as nearly "
                "empty, and compaction would never run)"
            )
        return chars


DEFAULTS = CompactionSettings()


def layer_settings(
    agent_id: str, base: CompactionSettings | None, override: object
) -> CompactionSettings:
    """``base`` (or the defaults) with the agent option ``override`` applied."""
    base = base or DEFAULTS
    if override is None:
        return base
    if isinstance(override, CompactionSettings):
        return override
    if not isinstance(override, Mapping):
        raise DshError(
            f"agent {agent_id!r}: option 'compaction' must be a mapping of compaction "
            f"settings, not {type(override).__name__}"
        )
    values: dict[str, Any] = {**base.model_dump(exclude_unset=True), **override}
    try:
        return CompactionSettings.model_validate(values)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or '(settings)'}: {e['msg']}" for e in exc.errors()
        )
        raise DshError(f"agent {agent_id!r}: option 'compaction': {problems}") from None
