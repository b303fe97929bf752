"""A successful answer that failed: truncated, filtered or refused behind an HTTP 200.

`classify_response(obj)` reads the reasons each API gives for stopping (OpenAI Chat
`finish_reason` and `refusal`, OpenAI Responses `status` / `incomplete_details` / refusal
parts, Anthropic `stop_reason`, Gemini `finishReason` and `promptFeedback.blockReason`, Bedrock
Converse `stopReason`), and an MCP tool result with `is_error` (`mcp_results`), from
the SDK's response object or its dict form (the JSON, or `model_dump()`), whichever it is
given. The object's kind is matched by (package, class name), a dict's by its keys: no SDK
is imported. A normal stop (`stop`, `end_turn`, `STOP`, a tool call) is None, and so is
anything this module does not recognise: it never guesses a failure.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from .._core.detail import ErrorDetail, unvalidated
from .._core.untrusted import clean_text
from .http import from_http
from .mcp_results import read_tool_result
from .pipeline import package_of

if TYPE_CHECKING:
    from .._core.code_names import BuiltinCode

__all__ = ["classify_response"]

_MAX_ITEMS = 64  # choices, candidates, output items read: real answers hold one or a few

# Why a generation stopped, by each API's own name for it. Unlisted reasons are normal stops.
_OPENAI_FINISH: dict[str, BuiltinCode] = {
    "length": "provider_output_truncated",
    "content_filter": "provider_content_filtered",
}
_OPENAI_INCOMPLETE: dict[str, BuiltinCode] = {
    "max_output_tokens": "provider_output_truncated",
    "content_filter": "provider_content_filtered",
}
_ANTHROPIC_STOP: dict[str, BuiltinCode] = {
    "max_tokens": "provider_output_truncated",
    "refusal": "provider_refused",
    "model_context_window_exceeded": "provider_context_too_long",
}
_GEMINI_FINISH: dict[str, BuiltinCode] = {
    "MAX_TOKENS": "provider_output_truncated",
    **dict.fromkeys(
        ("SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY",
         "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION"),
        "provider_content_filtered",
    ),
    **dict.fromkeys(("MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL"), "provider_bad_response"),
}  # fmt: skip
# Bedrock's Converse `stopReason` (and its stream's `messageStop` event).
_BEDROCK_STOP: dict[str, BuiltinCode] = {
    "max_tokens": "provider_output_truncated",
    "guardrail_intervened": "provider_content_filtered",
    "content_filtered": "provider_content_filtered",
    "model_context_window_exceeded": "provider_context_too_long",
    "malformed_model_output": "provider_bad_response",
    "malformed_tool_use": "provider_bad_response",
}


def _get(obj: object, *names: str) -> Any:
    """The first of `names` present on `obj`: a key of a mapping, else an attribute."""
    for name in names:
        if isinstance(obj, Mapping):
            value = obj.get(name)
        else:
            try:
                value = getattr(obj, name, None)
            except Exception:  # a property that raises is no field
                value = None
        if value is not None:
            return value
    return None


def _name(value: object) -> str | None:
    """An enum's or a string's name (genai's `FinishReason.SAFETY`, or "SAFETY")."""
    inner = getattr(value, "value", None)  # first: genai's enums are str subclasses
    if isinstance(inner, str):
        return inner
    return value if type(value) is str else None


def _items(value: object) -> list[Any]:
    return list(value[:_MAX_ITEMS]) if isinstance(value, (list, tuple)) else []


def _detail(code: BuiltinCode, message: str, source: str, **details: object) -> ErrorDetail:
    kept = {key: clean_text(value) for key, value in details.items() if isinstance(value, str)}
    return unvalidated(code, clean_text(message), source=source, details=kept)


# --- one reader per API ----------------------------------------------------------------------


def _openai_chat(obj: object, source: str = "openai") -> ErrorDetail | None:
    """A chat.completion (or a chunk of one): an error it carries, else each choice's finish
    reason and refusal. `source`: the OpenAI-compatible SDK whose class it is."""
    error = _get(obj, "error")
    if isinstance(error, Mapping) and error:
        # A stream's error event that the SDK handed over as a chunk (fireworks-ai does).
        return from_http(None, body={"error": error}, source=source)
    for choice in _items(_get(obj, "choices")):
        message = _get(choice, "message", "delta")
        refusal = _get(message, "refusal")
        if isinstance(refusal, str) and refusal:
            return _detail("provider_refused", refusal, source, finish_reason="refusal")
        reason = _name(_get(choice, "finish_reason"))
        code = _OPENAI_FINISH.get(reason or "")
        if code is not None:
            return _detail(
                code, f"the model stopped: finish_reason {reason}", source, finish_reason=reason
            )
    return None


def _openai_response(obj: object) -> ErrorDetail | None:
    """A Responses `response`: failed (its error), incomplete (why), or a refusal part."""
    status = _name(_get(obj, "status"))
    if status == "failed":
        # Its error has the shape of a stream's error event: the same decision reads it.
        error = _get(obj, "error")
        code, message = _name(_get(error, "code")), _get(error, "message")
        text = message if isinstance(message, str) else "the response failed"
        return from_http(None, body={"error": {"code": code, "message": text}}, source="openai")
    if status == "incomplete":
        reason = _name(_get(_get(obj, "incomplete_details"), "reason"))
        code = _OPENAI_INCOMPLETE.get(reason or "")
        if code is not None:
            return _detail(
                code, f"the response is incomplete: {reason}", "openai", incomplete_reason=reason
            )
    for item in _items(_get(obj, "output")):
        for part in _items(_get(item, "content")):
            refusal = _get(part, "refusal")
            if _name(_get(part, "type")) == "refusal" and isinstance(refusal, str):
                return _detail("provider_refused", refusal or "the model refused", "openai")
    return None


def _responses_event(obj: object) -> ErrorDetail | None:
    """A Responses stream event that carries the response (`response.incomplete`, ...)."""
    response = _get(obj, "response")
    return _openai_response(response) if response is not None else None


def _anthropic(obj: object) -> ErrorDetail | None:
    """A Message (or a Claude Code `result` line): its stop reason."""
    reason = _name(_get(obj, "stop_reason"))
    code = _ANTHROPIC_STOP.get(reason or "")
    if code is None:
        return None
    return _detail(
        code, f"the model stopped: stop_reason {reason}", "anthropic", stop_reason=reason
    )


def _anthropic_delta(obj: object) -> ErrorDetail | None:
    """A stream's `message_delta` event: the stop reason arrives in its delta."""
    return _anthropic(_get(obj, "delta"))


def _gemini(obj: object) -> ErrorDetail | None:
    """A GenerateContentResponse: a blocked prompt, else each candidate's finish reason."""
    feedback = _get(obj, "prompt_feedback", "promptFeedback")
    blocked = _name(_get(feedback, "block_reason", "blockReason"))
    if blocked and blocked != "BLOCKED_REASON_UNSPECIFIED":
        message = _get(feedback, "block_reason_message", "blockReasonMessage")
        text = message if isinstance(message, str) else f"the prompt was blocked: {blocked}"
        return _detail("provider_content_filtered", text, "google", block_reason=blocked)
    for candidate in _items(_get(obj, "candidates")):
        reason = _name(_get(candidate, "finish_reason", "finishReason"))
        code = _GEMINI_FINISH.get(reason or "")
        if code is not None:
            message = _get(candidate, "finish_message", "finishMessage")
            text = message if isinstance(message, str) else f"the model stopped: {reason}"
            return _detail(code, text, "google", finish_reason=reason)
    return None


def _bedrock(obj: object) -> ErrorDetail | None:
    """A Converse answer (boto3 returns a dict): its stop reason."""
    reason = _name(_get(obj, "stopReason"))
    code = _BEDROCK_STOP.get(reason or "")
    if code is None:
        return None
    return _detail(code, f"the model stopped: stopReason {reason}", "bedrock", stop_reason=reason)


def _bedrock_stop_event(obj: object) -> ErrorDetail | None:
    """A ConverseStream `messageStop` event: the stop reason arrives in it."""
    return _bedrock(_get(obj, "messageStop"))


_Reader = Callable[[object], ErrorDetail | None]

# (package, class name) -> reader, matched over the MRO (openai's ParsedChatCompletion is a
# ChatCompletion). Anthropic's beta classes read the same.
_BY_CLASS: dict[tuple[str, str], _Reader] = {
    ("openai", "ChatCompletion"): _openai_chat,
    ("openai", "ChatCompletionChunk"): _openai_chat,
    ("openai", "Response"): _openai_response,
    ("openai", "ResponseIncompleteEvent"): _responses_event,
    ("openai", "ResponseCompletedEvent"): _responses_event,
    ("openai", "ResponseFailedEvent"): _responses_event,
    ("anthropic", "Message"): _anthropic,
    ("anthropic", "BetaMessage"): _anthropic,
    ("anthropic", "RawMessageDeltaEvent"): _anthropic_delta,
    ("anthropic", "BetaRawMessageDeltaEvent"): _anthropic_delta,
    ("anthropic", "ParsedMessage"): _anthropic,
    ("google.genai", "GenerateContentResponse"): _gemini,
    # An MCP tool call's result (mcp's, and fastmcp's parsed one): `mcp_results`.
    ("mcp_types", "CallToolResult"): read_tool_result,
    ("fastmcp", "CallToolResult"): read_tool_result,
    # The OpenAI-compatible SDKs' own chat classes (cerebras-cloud-sdk's package is `cerebras`).
    **{
        (package, name): partial(_openai_chat, source=package)
        for package in ("groq", "together", "fireworks", "cerebras")
        for name in ("ChatCompletion", "ChatCompletionChunk")
    },
    **{
        ("cerebras", name): partial(_openai_chat, source="cerebras")
        for name in ("ChatCompletionResponse", "ChatChunkResponse", "ErrorChunkResponse")
    },
}


def _reader_for_class(kind: type) -> _Reader | None:
    for klass in kind.__mro__:
        reader = _BY_CLASS.get((package_of(klass.__module__), klass.__name__))
        if reader is not None:
            return reader
    return None


# A dict's `type` (or `object`) names its API when it has one; else a key only its API has.
_BY_TYPE: dict[str, _Reader] = {
    "chat.completion": _openai_chat,
    "chat.completion.chunk": _openai_chat,
    "response": _openai_response,
    "response.incomplete": _responses_event,
    "response.completed": _responses_event,
    "response.failed": _responses_event,
    "message": _anthropic,
    "message_delta": _anthropic_delta,
}
_BY_KEY: tuple[tuple[str, _Reader], ...] = (
    ("choices", _openai_chat),
    ("stop_reason", _anthropic),  # a Message, or a Claude Code `result` line
    ("candidates", _gemini),
    ("promptFeedback", _gemini),
    ("prompt_feedback", _gemini),
    ("incomplete_details", _openai_response),
    ("stopReason", _bedrock),  # Bedrock's Converse answer
    ("messageStop", _bedrock_stop_event),  # a ConverseStream event
)


def _reader_for_dict(data: Mapping[str, Any]) -> _Reader | None:
    kind = data.get("type")
    if not isinstance(kind, str):
        kind = data.get("object")
    reader = _BY_TYPE.get(kind) if isinstance(kind, str) else None
    if reader is not None:
        return reader
    if "content" in data and ("isError" in data or "is_error" in data):
        return read_tool_result  # an MCP tool result's JSON, or its `model_dump()`
    return next((reader for key, reader in _BY_KEY if key in data), None)


def classify_response(obj: object) -> ErrorDetail | None:
    """The failure a successful answer reports (`provider_output_truncated`,
    `provider_content_filtered`, `provider_refused`, ...), or None when it did its job or is
    nothing this reads. Never raises."""
    try:
        if isinstance(obj, Mapping):
            reader = _reader_for_dict(obj)
        elif obj is None or isinstance(obj, (str, bytes, int, float)):
            return None
        else:
            reader = _reader_for_class(type(obj))
        return reader(obj) if reader is not None else None
    except Exception:  # a hostile object: no answer, not an error
        return None
