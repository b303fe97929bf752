"""huggingface-hub's InferenceClient (httpx2 underneath) and Text Generation Inference's
stream errors."""

from __future__ import annotations

from ..._core.detail import ErrorDetail
from ..http import ProviderBody, parsed_http
from ..pipeline import Handler, always, error_message

__all__ = ["HUGGINGFACE_CLASSES"]


def _hf_http_error(exc: BaseException) -> ErrorDetail | None:
    """`HfHubHTTPError` and its subclasses: the response it keeps (status, body, headers)."""
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    if not isinstance(status, int) or isinstance(status, bool):
        return None
    try:
        content: object = response.content  # type: ignore[union-attr]
    except Exception:  # a streamed response that was never read
        content = None
    body = ProviderBody.read(content)
    if not body.message:
        server = getattr(exc, "server_message", None)
        text = server if isinstance(server, str) and server else error_message(exc)
        body = body._replace(message=text, has_error=True)
    return parsed_http(status, getattr(response, "headers", None), body, "huggingface")


def _hf_stream_error(exc: BaseException) -> ErrorDetail:
    """A stream's error line: the `error` it carried (a dict from an OpenAI-compatible server,
    Text Generation Inference's sentence) is the exception's argument."""
    error = exc.args[0] if exc.args else None
    if type(error) is dict:
        return parsed_http(None, None, ProviderBody.read({"error": error}), "huggingface")
    body = ProviderBody(message=error_message(exc), has_error=True)
    return parsed_http(None, None, body, "huggingface")


HUGGINGFACE_CLASSES: dict[str, Handler] = {
    "HfHubHTTPError": _hf_http_error,
    "TextGenerationError": _hf_stream_error,
    "OverloadedError": always("provider_overloaded", source="huggingface"),
    "ValidationError": always("provider_invalid_request", source="huggingface"),  # TGI's
    "IncompleteGenerationError": always("provider_output_truncated", source="huggingface"),
    "InferenceTimeoutError": always("provider_timeout", source="huggingface"),
}
