"""What a model reads of a failed tool call: the public view's sentence and the next step.

An agent framework hands a tool's failure back to the model as the tool's output. The model
is a public reader (principle 6): it reads only codes, numbers and this registry's sentences
(`public_view`), never the exception's text, and one sentence that says what to do next::

    {"ok": false, "error": {"code": "tool_input_invalid",
     "message": "A tool was called with input it does not accept.", "retryable": false,
     "retry_after_ms": null, "fix_required": "Correct the tool input",
     "next_step": "Correct the arguments and call the tool again."}}

The next step is one of three, from the detail alone: call again unchanged after the stated
wait (retryable); correct the call (`MODEL_FIXABLE`: the failure is the call's own
arguments or name, which the model chose); or stop calling and tell the user (anything
else: a quota, a key, a crash the model cannot change by calling differently).

Where a framework wraps the text itself (pydantic-ai sends `{"error": "<text>"}`),
`model_sentence` says the same in one line: `tool_input_invalid: A tool was called with
input it does not accept. Correct the arguments and call the tool again.`
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .._core.public import public_view, stated_wait_ms

if TYPE_CHECKING:
    from .._core.code_names import BuiltinCode
    from .._core.detail import ErrorDetail

__all__ = [
    "MODEL_FIXABLE",
    "model_can_fix",
    "model_error",
    "model_sentence",
    "model_text",
    "next_step",
]

MODEL_FIXABLE: frozenset[BuiltinCode] = frozenset(
    {"tool_input_invalid", "tool_not_found", "invalid_input"}
)
"""The codes a model fixes by calling differently: its arguments, or the tool's name."""

RETRY_STEP = "Call the tool again with the same arguments after {seconds} seconds."
"""The next step of a retryable failure (the wait is the stated one, rounded up)."""
FIX_STEP = "Correct the arguments and call the tool again."
"""The next step of a failure the model caused by its call (`MODEL_FIXABLE`)."""
STOP_STEP = "Do not call this tool again for this request; tell the user what happened."
"""The next step of anything else: calling again cannot help."""


def model_can_fix(detail: ErrorDetail) -> bool:
    """Whether the model can fix `detail` by calling differently (`MODEL_FIXABLE`)."""
    return public_view(detail).code in MODEL_FIXABLE


def next_step(detail: ErrorDetail) -> str:
    """The one sentence that tells the model what to do after `detail` (see the module)."""
    wait = stated_wait_ms(detail)
    if wait is not None:
        return RETRY_STEP.format(seconds=-(-wait // 1000))
    return FIX_STEP if model_can_fix(detail) else STOP_STEP


def model_error(detail: ErrorDetail) -> dict[str, Any]:
    """`detail` as the model reads it: the public view's fields and the next step."""
    view = public_view(detail)
    return {
        "code": view.code,
        "message": view.user_message,
        "retryable": view.retryable,
        "retry_after_ms": stated_wait_ms(view),
        "fix_required": view.fix_required,
        "next_step": next_step(detail),
    }


def model_text(detail: ErrorDetail) -> str:
    """`detail` as a tool's output the model reads: `{"ok": false, "error": ...}`, as JSON."""
    return json.dumps({"ok": False, "error": model_error(detail)}, ensure_ascii=False)


def model_sentence(detail: ErrorDetail) -> str:
    """`detail` in one line the model reads: the code, our sentence, the next step."""
    view = public_view(detail)
    return f"{view.code}: {view.user_message} {next_step(detail)}"
