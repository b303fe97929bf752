"""langchain-core's own error bases, for integrations that raise no SDK class, and LangGraph's
ToolNode errors."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..pipeline import Handler, always

if TYPE_CHECKING:
    from ..._core.code_names import BuiltinCode

__all__ = ["LANGCHAIN_CLASSES", "LANGGRAPH_CLASSES"]

# An integration's own error subclasses its SDK's class first (langchain-openai's
# OpenAIRateLimitError is an openai.RateLimitError), so the SDK's handler reads it; these
# langchain-core bases decide only when no SDK class is known. A bad model output is the
# provider's bad response.
_LANGCHAIN_CODES: dict[str, BuiltinCode] = {
    "OutputParserException": "provider_bad_response",
    "ContextOverflowError": "provider_context_too_long",
    "ModelRateLimitError": "provider_rate_limited",
    "ModelAuthenticationError": "provider_auth_failed",
    "ModelPermissionDeniedError": "provider_permission_denied",
    "ModelNotFoundError": "provider_model_not_found",
    "ModelInvalidRequestError": "provider_invalid_request",
    "ModelRefusalError": "provider_content_filtered",
    "ModelTimeoutError": "provider_timeout",
    "ModelConnectionError": "provider_connection_lost",
}
LANGCHAIN_CLASSES: dict[str, Handler] = {
    name: always(code, source="langchain") for name, code in _LANGCHAIN_CODES.items()
}

# LangGraph's ToolNode raises ToolInvocationError (a langchain-core ToolException) when the
# model's arguments fail the tool's schema: the call is wrong, not the tool.
LANGGRAPH_CLASSES: dict[str, Handler] = {
    "ToolInvocationError": always("tool_input_invalid"),
}
