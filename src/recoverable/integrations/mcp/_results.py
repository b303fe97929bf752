"""A failed tool call as the model reads it: the text and the structured content. Pure.

The MCP server side turns every failure of a tool into one `ToolFailure`, built from the
detail's public view (`recoverable._core.public`) and the recovery ladder (`next_action`),
never from what the exception said:

    text                 `code: sentence next-step`, where the next step is the ladder's:
                         retry      "Wait 7 s, then call this tool again with the same
                                    arguments."
                         run_fix    "To fix it, run: CMD. Then call this tool again once."
                         apply_fix  "Before calling this tool again: FIX."
                         stop       "Calling this tool again will not help: stop and report
                                    this failure."
    structured_content   the agent-tool envelope of the public detail (`Envelope.failure`,
                         `to_dict`): code (UPPER_SNAKE), retryable, retry_after_ms,
                         fix_required, fix_command, the registry's sentences

The public detail keeps only codes, numbers and this registry's sentences: its `message` is
the user sentence, no cause, no details, no source; `fix_command` only when this process
registered it for the code (`_core/fix_gate`: what an agent pastes must be what this
process would run). No mcp or fastmcp import: the edge builds the `CallToolResult`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..._core.detail import ErrorDetail
from ..._core.envelope import Envelope
from ..._core.fix_gate import fix_refusal
from ..._core.public import public_view, stated_wait_ms
from ..._core.secrets import scrub
from ...tools._ladder import Action, next_action

__all__ = [
    "MAX_ARGUMENT_NAMES",
    "ToolFailure",
    "argument_names",
    "input_invalid",
    "model_text",
    "public_detail",
    "tool_failure",
]

MAX_ARGUMENT_NAMES = 10
"""The most argument names an invalid-input answer lists."""
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")  # a parameter name, nothing longer


@dataclass(frozen=True, slots=True)
class ToolFailure:
    """A failed tool call, as the `CallToolResult` (`is_error=True`) carries it."""

    text: str
    """What the model reads: the code, the registry's sentence and the next step."""
    structured_content: dict[str, Any]
    """The agent-tool envelope of `detail` (`Envelope.failure(detail).to_dict()`)."""
    detail: ErrorDetail
    """The public detail both are built from: codes, numbers and this registry's words."""


def public_detail(detail: ErrorDetail) -> ErrorDetail:
    """`detail` with only what a model may read: its public view's code, recovery fields and
    sentences (the user sentence as `message` too), its upstream status, and its
    `fix_command` only when this process registered it for the code."""
    view = public_view(detail)
    command = detail.fix_command
    if view.code != detail.code or view.retryable or fix_refusal(view.code, command) is not None:
        command = None
    return ErrorDetail.create(
        view.code,
        view.user_message,
        retryable=view.retryable,
        retry_after_ms=stated_wait_ms(view),
        fix_required=view.fix_required,
        fix_command=command,
        status=detail.status if isinstance(detail.status, int) else None,
    )


def _seconds(wait_ms: int) -> str:
    if wait_ms % 1000 == 0:
        return str(wait_ms // 1000)
    return f"{math.ceil(wait_ms / 100) / 10:g}"  # never shorter than asked


def _next_step(action: Action, detail: ErrorDetail) -> str:
    if action.kind == "retry":
        return (
            f"Wait {_seconds(action.wait_ms)} s, then call this tool again with the same arguments."
        )
    if action.kind == "run_fix":
        return f"To fix it, run: {action.command}. Then call this tool again once."
    if action.kind == "apply_fix" and detail.fix_required:
        return f"Before calling this tool again: {detail.fix_required}."
    return "Calling this tool again will not help: stop and report this failure."


def model_text(detail: ErrorDetail, arguments: Iterable[str] = ()) -> str:
    """What the model reads for a public detail: `code: sentence next-step`, and the names
    of the arguments to correct when given."""
    text = f"{detail.code}: {detail.user_message} {_next_step(next_action(detail), detail)}"
    names = tuple(arguments)
    if names:
        text += f" Arguments to correct: {', '.join(names)}."
    return text


def tool_failure(
    detail: ErrorDetail, *, arguments: Iterable[str] = (), duration_ms: int = 0
) -> ToolFailure:
    """The answer to a tool call that failed with `detail` (any detail: it is read through
    `public_detail`). `arguments`: names of the arguments to correct (`argument_names`)."""
    shown = public_detail(detail)
    envelope = Envelope.failure(shown, duration_ms=duration_ms)
    return ToolFailure(model_text(shown, arguments), envelope.to_dict(), shown)


def input_invalid(arguments: Iterable[str] = (), *, duration_ms: int = 0) -> ToolFailure:
    """The answer to a call whose arguments the tool's input schema refused."""
    detail = ErrorDetail.create("tool_input_invalid")
    return tool_failure(detail, arguments=arguments, duration_ms=duration_ms)


def argument_names(errors: object, parameters: Iterable[str]) -> tuple[str, ...]:
    """The names of the arguments a pydantic validation refused (`ValidationError.errors()`),
    only those that are the tool's own `parameters`: the schema's words, never a value nor
    a key the caller made up. At most MAX_ARGUMENT_NAMES, sorted."""
    known = {name for name in parameters if isinstance(name, str) and _NAME.fullmatch(name)}
    found: set[str] = set()
    if isinstance(errors, (list, tuple)):
        for error in errors[: 10 * MAX_ARGUMENT_NAMES]:
            location = error.get("loc") if isinstance(error, dict) else None
            if isinstance(location, tuple) and location and location[0] in known:
                found.add(str(location[0]))
    return tuple(name for name in sorted(found) if scrub(name) == name)[:MAX_ARGUMENT_NAMES]
