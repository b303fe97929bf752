"""What a model reads of a failed tool call: the public detail and the one next step. Pure.

Every surface that hands a tool's failure back to a model (the MCP server side, LangGraph,
pydantic-ai, the OpenAI Agents SDK) reads it here, so the same detail says the same words
everywhere. The model is a public reader (principle 6): it reads only codes, numbers and
this registry's sentences, never the exception's text, and one sentence that says what to
do next. `public_detail` is what it may read: the public view (`_core/public`), and a
`fix_command` only when this process registered it for the code (`_core/fix_gate`).

The next step is the recovery ladder's (`tools._ladder.next_action`) on the public detail,
with the failures the model caused by its own call (`MODEL_FIXABLE`) told how to call
differently:

    kind       when                                  the sentence
    retry      retryable                             Wait 7 s, then call this tool again
                                                     with the same arguments.
    run_fix    a fix this process registered         Run `CMD`, then call this tool again
                                                     once.
    fix_call   the call's arguments were wrong       Correct the arguments, then call this
                                                     tool again.
               the tool's name was wrong             Call only the tools you were given,
                                                     by their exact names.
    apply_fix  something else must change first      Do not call this tool again until
                                                     this is done; tell the user: FIX.
    stop       anything else                         Do not call this tool again for this
                                                     request; tell the user what happened.

The wait is in whole or tenths of seconds, rounded up (never shorter than asked); FIX is
the registry's `fix_required` sentence. Two shapes carry it: `model_sentence`, one line
(`code: sentence next-step`, the MCP text and pydantic-ai's), and `model_text`, JSON
(`{"ok": false, "error": {code, message, retryable, retry_after_ms, fix_required,
fix_command, next_step}}`, LangGraph's and the Agents SDK's).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from .._core.detail import ErrorDetail
from .._core.fix_gate import fix_refusal
from .._core.public import public_view, stated_wait_ms
from ..tools._ladder import next_action

if TYPE_CHECKING:
    from .._core.code_names import BuiltinCode

__all__ = [
    "APPLY_FIX_STEP",
    "ARGUMENTS_STEP",
    "CALL_FIXES",
    "MODEL_FIXABLE",
    "RETRY_STEP",
    "RUN_FIX_STEP",
    "STOP_STEP",
    "TOOL_NAME_STEP",
    "ModelStep",
    "StepKind",
    "model_can_fix",
    "model_error",
    "model_sentence",
    "model_step",
    "model_text",
    "next_step",
    "public_detail",
    "wait_seconds",
]

StepKind = Literal["retry", "run_fix", "fix_call", "apply_fix", "stop"]

RETRY_STEP = "Wait {seconds} s, then call this tool again with the same arguments."
"""A retryable failure: the wait is the stated one (`wait_seconds`)."""
RUN_FIX_STEP = "Run `{command}`, then call this tool again once."
"""A failure whose fix this process registered for the code: the command, verbatim."""
ARGUMENTS_STEP = "Correct the arguments, then call this tool again."
"""The call's arguments were wrong: the model chose them."""
TOOL_NAME_STEP = "Call only the tools you were given, by their exact names."
"""The call named a tool that does not exist: the model chose the name."""
APPLY_FIX_STEP = "Do not call this tool again until this is done; tell the user: {fix}."
"""Something the model cannot change must change first: the registry's `fix_required`."""
STOP_STEP = "Do not call this tool again for this request; tell the user what happened."
"""Anything else: calling again cannot help."""

CALL_FIXES: Mapping[BuiltinCode, str] = {
    "tool_input_invalid": ARGUMENTS_STEP,
    "invalid_input": ARGUMENTS_STEP,
    "tool_not_found": TOOL_NAME_STEP,
}
"""The codes a model fixes by calling differently, each with the step that says how."""
MODEL_FIXABLE: frozenset[BuiltinCode] = frozenset(CALL_FIXES)
"""The codes a model fixes by calling differently: its arguments, or the tool's name."""


@dataclass(frozen=True, slots=True)
class ModelStep:
    """What the model is told to do next about a failed call."""

    kind: StepKind
    """The ladder's action (`retry`, `run_fix`, `apply_fix`, `stop`), or `fix_call` when
    the model fixes the failure by calling differently (`MODEL_FIXABLE`)."""
    sentence: str
    """The one sentence the model reads (see the module's table)."""


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


def wait_seconds(wait_ms: int) -> str:
    """`wait_ms` in whole seconds when it is whole, else tenths, rounded up: `7`, `1.5`."""
    if wait_ms % 1000 == 0:
        return str(wait_ms // 1000)
    return f"{math.ceil(wait_ms / 100) / 10:g}"  # never shorter than asked


def _step(shown: ErrorDetail) -> ModelStep:
    action = next_action(shown)  # a public detail: its command, if any, is registered here
    if action.kind == "retry":
        return ModelStep("retry", RETRY_STEP.format(seconds=wait_seconds(action.wait_ms)))
    if action.kind == "run_fix" and action.command:
        return ModelStep("run_fix", RUN_FIX_STEP.format(command=action.command))
    call_fix = CALL_FIXES.get(shown.code)  # type: ignore[call-overload]
    if call_fix is not None:
        return ModelStep("fix_call", call_fix)
    if action.kind == "apply_fix" and shown.fix_required:
        fix = shown.fix_required.rstrip(".")
        return ModelStep("apply_fix", APPLY_FIX_STEP.format(fix=fix))
    return ModelStep("stop", STOP_STEP)


def model_step(detail: ErrorDetail) -> ModelStep:
    """What the model is told to do next about `detail` (any detail: it is read through
    `public_detail`)."""
    return _step(public_detail(detail))


def next_step(detail: ErrorDetail) -> str:
    """The one sentence that tells the model what to do after `detail` (see the module)."""
    return model_step(detail).sentence


def model_can_fix(detail: ErrorDetail) -> bool:
    """Whether the model fixes `detail` by calling differently (the step is `fix_call`)."""
    return model_step(detail).kind == "fix_call"


def model_error(detail: ErrorDetail) -> dict[str, Any]:
    """`detail` as the model reads it: the public detail's fields and the next step."""
    shown = public_detail(detail)
    return {
        "code": shown.code,
        "message": shown.user_message,
        "retryable": shown.retryable,
        "retry_after_ms": shown.retry_after_ms,
        "fix_required": shown.fix_required,
        "fix_command": shown.fix_command,
        "next_step": _step(shown).sentence,
    }


def model_text(detail: ErrorDetail) -> str:
    """`detail` as a tool's output the model reads: `{"ok": false, "error": ...}`, as JSON."""
    return json.dumps({"ok": False, "error": model_error(detail)}, ensure_ascii=False)


def model_sentence(detail: ErrorDetail) -> str:
    """`detail` in one line the model reads: the code, our sentence, the next step."""
    shown = public_detail(detail)
    return f"{shown.code}: {shown.user_message} {_step(shown).sentence}"
