"""FakeProvider's Gemini generateContent API as the real google-genai SDK reads it over
loopback: answers, google.rpc errors, the SAFETY block, the in-stream error, cut streams.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx2
import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types as genai_types

from recoverable.testing import FakeProvider, Fault, Reply

from ..support.providers import HELLO, RPC, collect


@pytest.fixture
def gem(fake: FakeProvider) -> Iterator[genai.Client]:
    # Keep a reference: a garbage-collected genai.Client closes the HTTP client it lent out.
    options = genai_types.HttpOptions(base_url=fake.url, timeout=5000)
    client = genai.Client(api_key="x", http_options=options)
    yield client
    client.close()


def recorded(fake: FakeProvider) -> list[tuple[str, str, str | None, bool, dict[str, str]]]:
    """Each recorded request's API, path, model, stream flag and query."""
    return [(r.api, r.path, r.model, r.stream, r.query) for r in fake.requests]


# -- answers ----------------------------------------------------------------------------------


def test_gemini_text(fake: FakeProvider, gem: genai.Client) -> None:
    response = gem.models.generate_content(model="gemini-2.5-flash", contents="hi")
    assert response.text == HELLO
    assert response.model_version == "gemini-2.5-flash"
    assert response.candidates is not None
    assert response.candidates[0].finish_reason == genai_types.FinishReason.STOP
    assert recorded(fake) == [
        ("gemini", "/v1/models/gemini-2.5-flash:generateContent", "gemini-2.5-flash", False, {}),
    ]
    assert fake.requests[0].headers["x-goog-api-key"] == "x"


def test_gemini_stream_text(fake: FakeProvider, gem: genai.Client) -> None:
    chunks = list(gem.models.generate_content_stream(model="gemini-2.5-flash", contents="hi"))
    assert [c.text for c in chunks] == ["Hello", " from", " FakeProvider."]
    assert [c.candidates[0].finish_reason if c.candidates else None for c in chunks] == [
        None,
        None,
        genai_types.FinishReason.STOP,
    ]
    assert chunks[-1].usage_metadata is not None
    assert chunks[-1].usage_metadata.candidates_token_count == len(HELLO) // 4
    assert recorded(fake) == [
        (
            "gemini",
            "/v1/models/gemini-2.5-flash:streamGenerateContent",
            "gemini-2.5-flash",
            True,
            {"alt": "sse"},
        ),
    ]


def test_gemini_function_call(fake: FakeProvider, gem: genai.Client) -> None:
    fake.reply(Reply.tool_call("get_weather", {"city": "Paris"}))
    [call] = (
        gem.models.generate_content(model="gemini-2.5-flash", contents="hi").function_calls or []
    )
    assert (call.name, call.args) == ("get_weather", {"city": "Paris"})
    assert recorded(fake) == [
        ("gemini", "/v1/models/gemini-2.5-flash:generateContent", "gemini-2.5-flash", False, {}),
    ]


def test_gemini_count_tokens(fake: FakeProvider, gem: genai.Client) -> None:
    count = gem.models.count_tokens(model="gemini-2.5-flash", contents="hi")
    assert count.total_tokens == len(fake.requests[-1].body) // 4
    assert recorded(fake) == [
        ("gemini", "/v1/models/gemini-2.5-flash:countTokens", "gemini-2.5-flash", False, {}),
    ]


# -- HTTP errors and the SAFETY block ---------------------------------------------------------


def test_gemini_rate_limited_retry_info(fake: FakeProvider, gem: genai.Client) -> None:
    fake.fail(Fault.rate_limited(retry_delay="38s"))
    with pytest.raises(genai_errors.ClientError) as info:
        gem.models.generate_content(model="gemini-2.0-flash", contents="hi")
    e = info.value
    assert (e.code, e.status) == (429, "RESOURCE_EXHAUSTED")
    details = e.details["error"]["details"]
    assert [d["@type"] for d in details] == [RPC + "QuotaFailure", RPC + "Help", RPC + "RetryInfo"]
    assert details[2] == {"@type": RPC + "RetryInfo", "retryDelay": "38s"}
    violation = details[0]["violations"][0]
    assert violation["quotaId"] == "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"
    assert violation["quotaDimensions"] == {"location": "global", "model": "gemini-2.0-flash"}
    assert e.message is not None
    assert e.message.endswith("model: gemini-2.0-flash\nPlease retry in 38s.")
    assert str(e).startswith("429 RESOURCE_EXHAUSTED. {'error': {'code': 429, 'message': ")


def test_gemini_retry_delay_from_retry_after(fake: FakeProvider, gem: genai.Client) -> None:
    fake.fail(Fault.rate_limited(retry_after_ms=1500))
    with pytest.raises(genai_errors.ClientError) as info:
        gem.models.generate_content(model="gemini-2.0-flash", contents="hi")
    assert info.value.details["error"]["details"][-1] == {
        "@type": RPC + "RetryInfo",
        "retryDelay": "1.5s",
    }
    assert info.value.response.headers["retry-after-ms"] == "1500"


def test_gemini_insufficient_quota_is_per_day(fake: FakeProvider, gem: genai.Client) -> None:
    fake.fail(Fault.insufficient_quota())
    with pytest.raises(genai_errors.ClientError) as info:
        gem.models.generate_content(model="gemini-2.0-flash", contents="hi")
    assert (info.value.code, info.value.status) == (429, "RESOURCE_EXHAUSTED")
    [quota] = [
        d for d in info.value.details["error"]["details"] if d["@type"].endswith("QuotaFailure")
    ]
    assert quota["violations"][0]["quotaId"] == "GenerateRequestsPerDayPerProjectPerModel-FreeTier"


def test_gemini_invalid_key_is_a_400(fake: FakeProvider, gem: genai.Client) -> None:
    fake.fail(Fault.unauthorized())
    with pytest.raises(genai_errors.ClientError) as info:
        gem.models.generate_content(model="gemini-2.0-flash", contents="hi")
    e = info.value
    assert (e.code, e.status, e.message) == (
        400,
        "INVALID_ARGUMENT",
        "API key not valid. Please pass a valid API key.",
    )
    assert e.details["error"]["details"][0] == {
        "@type": RPC + "ErrorInfo",
        "reason": "API_KEY_INVALID",
        "domain": "googleapis.com",
        "metadata": {"service": "generativelanguage.googleapis.com"},
    }


def test_gemini_content_policy_is_a_200(fake: FakeProvider, gem: genai.Client) -> None:
    fake.fail(Fault.content_policy())
    response = gem.models.generate_content(model="gemini-2.0-flash", contents="hi")
    assert response.text is None
    assert response.candidates is not None
    assert response.candidates[0].finish_reason == genai_types.FinishReason.SAFETY
    assert [r.fault for r in fake.requests] == ["content_policy"]


def test_gemini_streamed_content_policy_is_a_200(fake: FakeProvider, gem: genai.Client) -> None:
    fake.fail(Fault.content_policy())
    chunks = list(gem.models.generate_content_stream(model="gemini-2.0-flash", contents="hi"))
    assert [c.candidates[0].finish_reason if c.candidates else None for c in chunks] == [
        genai_types.FinishReason.SAFETY
    ]
    assert [r.fault for r in fake.requests] == ["content_policy"]


GEMINI_ERRORS = [
    (Fault.rate_limited(), genai_errors.ClientError, 429, "RESOURCE_EXHAUSTED"),
    (Fault.insufficient_quota(), genai_errors.ClientError, 429, "RESOURCE_EXHAUSTED"),
    (Fault.payment_required(), genai_errors.ClientError, 402, "FAILED_PRECONDITION"),
    (Fault.unauthorized(), genai_errors.ClientError, 400, "INVALID_ARGUMENT"),
    (Fault.forbidden(), genai_errors.ClientError, 403, "PERMISSION_DENIED"),
    (Fault.model_not_found("gemini-9"), genai_errors.ClientError, 404, "NOT_FOUND"),
    (Fault.context_too_long(), genai_errors.ClientError, 400, "INVALID_ARGUMENT"),
    (Fault.server_error(), genai_errors.ServerError, 500, "INTERNAL"),
    (Fault.unavailable(), genai_errors.ServerError, 503, "UNAVAILABLE"),
    (Fault.overloaded(), genai_errors.ServerError, 529, "UNAVAILABLE"),
]


@pytest.mark.parametrize(("fault", "cls", "code", "status"), GEMINI_ERRORS)
def test_gemini_error_matrix(
    fake: FakeProvider,
    gem: genai.Client,
    fault: Fault,
    cls: type[Exception],
    code: int,
    status: str,
) -> None:
    fake.fail(fault)
    with pytest.raises(cls) as info:
        gem.models.generate_content(model="gemini-2.0-flash", contents="hi")
    e = info.value
    assert isinstance(e, genai_errors.APIError)
    assert type(e) is cls
    assert (e.code, e.status) == (code, status)
    assert list(e.details) == ["error"]
    assert list(e.details["error"])[:3] == ["code", "message", "status"]


def test_gemini_context_too_long_message(fake: FakeProvider, gem: genai.Client) -> None:
    fake.fail(Fault.context_too_long())
    with pytest.raises(genai_errors.ClientError) as g:
        gem.models.generate_content(model="gemini-2.0-flash", contents="hi")
    assert g.value.message == (
        "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."
    )
    assert [r.fault for r in fake.requests] == ["context_too_long"]


def test_gemini_model_not_found_message(fake: FakeProvider, gem: genai.Client) -> None:
    fake.fail(Fault.model_not_found())
    with pytest.raises(genai_errors.ClientError) as g404:
        gem.models.generate_content(model="gemini-9", contents="hi")
    assert g404.value.message == (
        "models/gemini-9 is not found for API version v1, or is not supported for"
        " generateContent. Call ListModels to see the list of available models and their"
        " supported methods."
    )
    assert [r.fault for r in fake.requests] == ["model_not_found"]


# -- in-stream error --------------------------------------------------------------------------


def test_gemini_stream_error_chunk(fake: FakeProvider, gem: genai.Client) -> None:
    fake.fail(Fault.stream_overloaded())
    stream = gem.models.generate_content_stream(model="gemini-2.0-flash", contents="hi")
    seen: list[str | None] = []
    with pytest.raises(genai_errors.ServerError) as info:
        collect(stream, seen, lambda c: c.text)
    assert (info.value.code, info.value.status, info.value.message) == (
        503,
        "UNAVAILABLE",
        "The model is overloaded. Please try again later.",
    )
    assert seen == ["Hello"]


# -- transport faults -------------------------------------------------------------------------


def test_gemini_drop_escapes_as_the_raw_httpx2_error(fake: FakeProvider, gem: genai.Client) -> None:
    fake.fail(Fault.drop())
    # google-genai does not wrap transport errors: the raw httpx2 exception escapes.
    with pytest.raises(httpx2.RemoteProtocolError) as g:
        gem.models.generate_content(model="gemini-2.0-flash", contents="hi")
    assert str(g.value) == "Server disconnected without sending a response."
    assert [r.fault for r in fake.requests] == ["drop"]


def test_gemini_cut_stream(fake: FakeProvider, gem: genai.Client) -> None:
    fake.fail(Fault.cut_stream(after=2))
    stream = gem.models.generate_content_stream(model="gemini-2.0-flash", contents="hi")
    seen: list[str | None] = []
    with pytest.raises(httpx2.RemoteProtocolError):
        collect(stream, seen, lambda c: c.text)
    assert seen == ["Hello", " from"]


def test_gemini_graceful_cut_ends_the_stream_without_finish(
    fake: FakeProvider, gem: genai.Client
) -> None:
    fake.fail(Fault.cut_stream(after=2, graceful=True))
    chunks_g = list(gem.models.generate_content_stream(model="gemini-2.0-flash", contents="hi"))
    assert [c.candidates[0].finish_reason if c.candidates else None for c in chunks_g] == [
        None,
        None,
    ]
    assert len(fake.requests) == 1
