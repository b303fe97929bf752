"""OpenRouter, DeepSeek, vLLM and LM Studio: the real openai SDK with a `base_url` at
FakeProvider, every fault, streaming and not.

The SDK raises its own classes; each service's body differs from OpenAI's (OpenRouter's
numeric `code` and `metadata`, DeepSeek's titles, vLLM's flat `{"object": "error"}`, LM
Studio's `{"error": "<sentence>"}`), and each case asserts the exact classification.
"""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

import recoverable as rc
from recoverable.testing import FakeProvider, Fault

from ...support.providers import SdkCase, check_classified, free_port, raised, sdk_cases

MESSAGES: Any = [{"role": "user", "content": "hi"}]
PATHS = {"openrouter": "/api/v1", "deepseek": "", "vllm": "/vllm/v1", "lmstudio": "/lmstudio/v1"}


def _call(fake: FakeProvider, service: str, stream: bool, timeout: float = 10) -> list[Any]:
    client = openai.OpenAI(api_key="sk-fake-key-123456", base_url=fake.url + PATHS[service],
                           max_retries=0, timeout=timeout)  # fmt: skip
    answer = client.chat.completions.create(model="some-model", messages=MESSAGES, stream=stream)
    return list(answer) if stream else [answer]


_RL, _ST, _PD, _NF, _BR, _IS = (
    "RateLimitError", "APIStatusError", "PermissionDeniedError", "NotFoundError",
    "BadRequestError", "InternalServerError",
)  # fmt: skip
_ALL_SERVICES_SHARE = [
    (Fault.rate_limited(retry_after=6), False, _RL, "provider_rate_limited", True, 6000, 429),
    (Fault.rate_limited(retry_after_ms=700), True, _RL, "provider_rate_limited", True, 700, 429),
    (Fault.unauthorized(), False, "AuthenticationError", "provider_auth_failed", False, None, 401),
    (Fault.forbidden(), False, _PD, "provider_permission_denied", False, None, 403),
    (Fault.context_too_long(), False, _BR, "provider_context_too_long", False, None, 400),
    (Fault.context_too_long(), True, _BR, "provider_context_too_long", False, None, 400),
    (Fault.server_error(), False, _IS, "provider_server_error", True, None, 500),
    (Fault.unavailable(), False, _IS, "provider_overloaded", True, None, 503),
    (Fault.stream_overloaded(), True, "APIError", "provider_overloaded", True, None, None),
    (Fault.drop(), False, "APIConnectionError", "provider_connection_lost", True, None, None),
    (Fault.cut_stream(), True, "APIConnectionError", "provider_connection_lost", True, None,
     None),
]  # fmt: skip

# service -> its own cases (fault, stream, class, code, retryable, retry_after_ms, status,
# error_code)
CASES: dict[str, list[tuple[Any, ...]]] = {
    "openrouter": [
        (Fault.insufficient_quota(), False, _ST, "provider_quota_exceeded", False, None, 402),
        (Fault.payment_required(), True, _ST, "provider_quota_exceeded", False, None, 402),
        (Fault.model_not_found(), False, _BR, "provider_model_not_found", False, None, 400),
        # the moderation 403: content filtered, not a permission
        (Fault.content_policy(), False, _PD, "provider_content_filtered", False, None, 403,
         "content_filter"),
        (Fault.content_policy(), True, _PD, "provider_content_filtered", False, None, 403,
         "content_filter"),
        # Anthropic's overloaded_error relayed in metadata.raw under OpenRouter's 502
        (Fault.overloaded(), False, _IS, "provider_overloaded", True, None, 502),
    ],
    "deepseek": [
        (Fault.insufficient_quota(), False, _ST, "provider_quota_exceeded", False, None, 402,
         "invalid_request_error"),
        (Fault.model_not_found(), False, _BR, "provider_model_not_found", False, None, 400),
        (Fault.content_policy(), False, _BR, "provider_content_filtered", False, None, 400),
        (Fault.content_policy(), True, _BR, "provider_content_filtered", False, None, 400),
    ],
    "vllm": [
        (Fault.model_not_found(), False, _NF, "provider_model_not_found", False, None, 404),
        (Fault.model_not_found(), True, _NF, "provider_model_not_found", False, None, 404),
    ],
    "lmstudio": [
        (Fault.model_not_found(), False, _BR, "provider_model_not_found", False, None, 400),
        (Fault.payment_required(), False, _ST, "provider_quota_exceeded", False, None, 402),
        # no billing and no filter of its own: the reason phrase and the status say it all
        (Fault.insufficient_quota(), False, _RL, "provider_rate_limited", True, None, 429),
        (Fault.content_policy(), False, _BR, "provider_invalid_request", False, None, 400),
    ],
}  # fmt: skip
PARAMS = [
    pytest.param(service, case.values[0], id=f"{service}-{case.id}")
    for service, own in CASES.items()
    for case in sdk_cases([*_ALL_SERVICES_SHARE, *own])
]


@pytest.mark.parametrize(("service", "case"), PARAMS)
def test_the_openai_sdk_raises_and_we_read_the_service_s_body(
    fake: FakeProvider, service: str, case: SdkCase
) -> None:
    fake.fail(case.fault)
    error = raised(lambda: _call(fake, service, case.stream))
    check_classified(error, case, "openai")
    assert [r.api for r in fake.requests] == [f"{service}_chat"]


def test_openrouter_s_moderation_body_reaches_the_caller(fake: FakeProvider) -> None:
    fake.fail(Fault.content_policy())
    error = raised(lambda: _call(fake, "openrouter", False))
    assert isinstance(error, openai.PermissionDeniedError)
    body: Any = error.body
    assert (body["code"], body["metadata"]["reasons"]) == (403, ["violence"])
    assert rc.classify(error).message.startswith("some-model requires moderation on OpenAI.")


def test_openrouter_relays_an_upstream_body_in_metadata_raw() -> None:
    """The upstream's own code decides: a quota relayed under OpenRouter's 429 is billing."""
    upstream = {"error": {"message": "You exceeded your current quota, please check your plan",
                          "type": "insufficient_quota", "code": "insufficient_quota"}}  # fmt: skip
    body = {
        "error": {
            "code": 429,
            "message": "Provider returned error",
            "metadata": {"provider_name": "OpenAI", "raw": json.dumps(upstream)},
        }
    }
    detail = rc.from_http(429, {"retry-after": "3"}, body)
    assert (detail.code, detail.retryable, detail.retry_after_ms, detail.details["error_code"]) == (
        "provider_quota_exceeded", False, None, "insufficient_quota")  # fmt: skip
    # an upstream that names nothing leaves OpenRouter's status to decide
    vague = {
        "error": {
            "code": 502,
            "message": "Provider returned error",
            "metadata": {"provider_name": "X", "raw": "upstream connect error"},
        }
    }
    assert rc.from_http(502, None, vague).code == "provider_server_error"
    # the raw as an object, a context overflow in the upstream's words
    context = {
        "error": {
            "code": 400,
            "message": "Provider returned error",
            "metadata": {
                "raw": {"error": {"message": "prompt is too long: 210000 tokens > 200000 maximum"}}
            },
        }
    }
    assert rc.from_http(400, None, context).code == "provider_context_too_long"


def test_vllm_s_flat_body_and_its_newer_wording() -> None:
    flat = {"object": "error", "type": "BadRequestError", "param": None, "code": 400,
            "message": "The decoder prompt (length 5000) is longer than the maximum model "
                       "length of 4096. Make sure that `max_model_len` is no smaller"}  # fmt: skip
    detail = rc.from_http(400, None, flat)
    assert (detail.code, detail.details["error_type"]) == (
        "provider_context_too_long", "BadRequestError")  # fmt: skip


@pytest.mark.parametrize(
    "sentence",
    [
        "Trying to keep the first 111490 tokens when context the overflows. However, the model"
        " is loaded with context length of only 32768 tokens, which is not enough.",
        "Context size has been exceeded.",
    ],
)
def test_lm_studio_s_other_context_sentences(sentence: str) -> None:
    assert rc.from_http(400, None, {"error": sentence}).code == "provider_context_too_long"


def test_quoted_service_sentences_do_not_match() -> None:
    for quoted in ("user wrote: Model Not Exist", "see: Insufficient Balance", "x: no models"):
        assert rc.from_http(400, None, {"error": {"message": quoted}}).code == (
            "provider_invalid_request"
        )


@pytest.mark.parametrize("service", list(PATHS))
def test_a_hang_past_the_client_timeout(fake: FakeProvider, service: str) -> None:
    fake.fail(Fault.hang(5))
    error = raised(lambda: _call(fake, service, False, timeout=0.5))
    assert type(error).__name__ == "APITimeoutError"
    assert (rc.classify(error).code, rc.classify(error).retryable) == ("provider_timeout", True)


@pytest.mark.parametrize("service", list(PATHS))
def test_nothing_listening_is_unreachable(service: str) -> None:
    client = openai.OpenAI(api_key="k", base_url=f"http://127.0.0.1:{free_port()}{PATHS[service]}",
                           max_retries=0)  # fmt: skip
    error = raised(lambda: client.chat.completions.create(model="m", messages=MESSAGES))
    detail = rc.classify(error)
    assert (detail.code, detail.retryable, detail.details["phase"]) == (
        "provider_unreachable", True, "connect")  # fmt: skip


@pytest.mark.parametrize("service", list(PATHS))
def test_a_normal_answer(fake: FakeProvider, service: str) -> None:
    (answer,) = _call(fake, service, False)
    assert answer.choices[0].message.content == "Hello from FakeProvider."
    assert rc.classify_response(answer) is None
    assert len(_call(fake, service, True)) == 5
