"""A failed tool call as an MCP server answers it: the text and the structured content. Pure.

The MCP server side turns every failure of a tool into one `ToolFailure`, built from the
public detail (`integrations._model_text.public_detail`: codes, numbers, this registry's
sentences, a `fix_command` only when this process registered it), never from what the
exception said:

    text                 `_model_text`'s `model_sentence` (`code: sentence next-step`, the
                         same words every framework's model reads), and for input the
                         schema refused the names of the arguments to correct
    structured_content   the agent-tool envelope of the public detail (`Envelope.failure`,
                         `to_dict`): code (UPPER_SNAKE), retryable, retry_after_ms,
                         fix_required, fix_command, the registry's sentences

No mcp or fastmcp import: the edge builds the `CallToolResult`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..._core.detail import ErrorDetail
from ..._core.envelope import Envelope
from ..._core.secrets import scrub
from .._model_text import model_sentence, public_detail

__all__ = [
    "MAX_ARGUMENT_NAMES",
    "ToolFailure",
    "argument_names",
    "input_invalid",
    "tool_failure",
    "tool_text",
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


def tool_text(detail: ErrorDetail, arguments: Iterable[str] = ()) -> str:
    """What the model reads for a public detail: `model_sentence`, and the names of the
    arguments to correct when given."""
    text = model_sentence(detail)
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
    return ToolFailure(tool_text(shown, arguments), envelope.to_dict(), shown)


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
