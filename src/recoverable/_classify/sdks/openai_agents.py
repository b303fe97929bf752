"""The OpenAI Agents SDK (package `agents`): what the loop around the model decides."""

from __future__ import annotations

from typing import Any

from ..._core.detail import ErrorDetail, unvalidated
from ..._core.untrusted import clean_text
from ..pipeline import Handler, always, error_message

__all__ = ["AGENTS_CLASSES"]

# The SDK raises its own classes for what the loop around the model decides; the model's HTTP
# failures reach the caller as openai's own exceptions (`openai.py`). A UserError is a misuse of
# the SDK by the program (a tool or model that does not exist, bad settings): its bug, never
# retried.
_GUARDRAIL_KINDS = {
    "InputGuardrailTripwireTriggered": "input",
    "OutputGuardrailTripwireTriggered": "output",
    "ToolInputGuardrailTripwireTriggered": "tool_input",
    "ToolOutputGuardrailTripwireTriggered": "tool_output",
}


def _guardrail(kind: str) -> Handler:
    """A tripwire: which guardrail (by the name its author gave it) and where it sits."""

    def handler(exc: BaseException) -> ErrorDetail:
        holder = getattr(getattr(exc, "guardrail_result", None), "guardrail", None)
        owner = holder if holder is not None else getattr(exc, "guardrail", None)
        name = getattr(owner, "name", None)
        details: dict[str, Any] = {"guardrail": kind}
        if isinstance(name, str):
            details["guardrail_name"] = clean_text(name)
        return unvalidated("run_guardrail_triggered", error_message(exc), details=details)

    return handler


# A function tool's arguments that are not JSON or fail its schema: the SDK's own fixed
# opening (`agents.tool`), so the model's call is wrong, not the model's answer as a whole.
_TOOL_ARGUMENTS = "Invalid JSON input for tool "


def _model_behavior(exc: BaseException) -> ErrorDetail:
    said = error_message(exc)
    if said.startswith(_TOOL_ARGUMENTS):
        return unvalidated("tool_input_invalid", said)
    return unvalidated("provider_bad_response", said)


AGENTS_CLASSES: dict[str, Handler] = {
    "MaxTurnsExceeded": always("run_max_turns"),
    "ModelBehaviorError": _model_behavior,
    "ModelRefusalError": always("provider_refused"),
    "ModelTimeoutError": always("provider_timeout"),
    "UserError": always("internal_error"),
    "ToolTimeoutError": always("tool_timeout"),
    "MCPToolCancellationError": always("tool_execution_failed"),
    **{name: _guardrail(kind) for name, kind in _GUARDRAIL_KINDS.items()},
}
