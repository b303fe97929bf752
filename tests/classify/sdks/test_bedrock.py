"""Amazon Bedrock: the real boto3 `bedrock-runtime` client against FakeProvider's Converse and
ConverseStream, every fault; botocore's credential and transport errors for real; forged
answers of any shape.

botocore raises a modeled `ClientError` subclass per error code (`ThrottlingException`, ...),
an `EventStreamError` for a ConverseStream's in-stream exception, and its own transport
classes (`ReadTimeoutError`, `ConnectionClosedError`, `EndpointConnectionError`); a stream cut
mid-body surfaces as urllib3's `ProtocolError`, unwrapped. Its own retries are off
(`total_max_attempts=1`), so each call is one request.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import boto3
import botocore.exceptions
import pytest
from botocore.config import Config
from hypothesis import given, settings
from hypothesis import strategies as st

import recoverable as rc
from recoverable._classify.sdks.bedrock import BOTOCORE_CLASSES, URLLIB3_CLASSES
from recoverable.testing import FakeProvider, Fault, RateLimit, Reply, sdk_error
from recoverable.testing._faults import FAULT_NAMES
from recoverable.testing._providers.bedrock import event_message

from ...support.providers import free_port, raised

MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"
MESSAGES: Any = [{"role": "user", "content": [{"text": "hi"}]}]
KEY_ID, SECRET = "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


def _client(url: str, read_timeout: float = 10, **credentials: Any) -> Any:
    config = Config(retries={"total_max_attempts": 1}, read_timeout=read_timeout,
                    connect_timeout=2)  # fmt: skip
    if not credentials:
        credentials = {"aws_access_key_id": KEY_ID, "aws_secret_access_key": SECRET}
    return boto3.client("bedrock-runtime", endpoint_url=url, region_name="us-east-1",
                        config=config, **credentials)  # fmt: skip


def _call(url: str, stream: bool, read_timeout: float = 10) -> list[Any]:
    client = _client(url, read_timeout)
    if stream:
        return list(client.converse_stream(modelId=MODEL, messages=MESSAGES)["stream"])
    return [client.converse(modelId=MODEL, messages=MESSAGES)]


# (fault, stream, class raised, code, retryable, status, in_stream)
CASES = [
    (Fault.rate_limited(), False, "ThrottlingException", "provider_rate_limited", True, 429,
     None),
    (Fault.rate_limited(), True, "EventStreamError", "provider_rate_limited", True, None, True),
    (Fault.insufficient_quota(), False, "ThrottlingException", "provider_quota_exceeded", False,
     429, None),
    (Fault.insufficient_quota(), True, "EventStreamError", "provider_quota_exceeded", False,
     None, True),
    (Fault.payment_required(), False, "AccessDeniedException", "provider_quota_exceeded", False,
     403, None),
    (Fault.unauthorized(), False, "ClientError", "provider_auth_failed", False, 403, None),
    (Fault.unauthorized(), True, "ClientError", "provider_auth_failed", False, 403, None),
    (Fault.forbidden(), False, "AccessDeniedException", "provider_permission_denied", False, 403,
     None),
    (Fault.model_not_found(), False, "ValidationException", "provider_model_not_found", False,
     400, None),
    (Fault.model_not_found(), True, "ValidationException", "provider_model_not_found", False,
     400, None),
    (Fault.context_too_long(), False, "ValidationException", "provider_context_too_long", False,
     400, None),
    (Fault.context_too_long(), True, "EventStreamError", "provider_context_too_long", False,
     None, True),
    (Fault.server_error(), False, "InternalServerException", "provider_server_error", True, 500,
     None),
    (Fault.server_error(), True, "EventStreamError", "provider_server_error", True, None, True),
    (Fault.unavailable(), False, "ServiceUnavailableException", "provider_overloaded", True, 503,
     None),
    (Fault.overloaded(), True, "EventStreamError", "provider_overloaded", True, None, True),
    (Fault.stream_overloaded(), True, "EventStreamError", "provider_overloaded", True, None,
     True),
    (Fault.drop(), False, "ConnectionClosedError", "provider_connection_lost", True, None, None),
    (Fault.drop(), True, "ConnectionClosedError", "provider_connection_lost", True, None, None),
    (Fault.cut_stream(), True, "ProtocolError", "provider_connection_lost", True, None, True),
]  # fmt: skip


@pytest.mark.parametrize(
    ("fault", "stream", "raised_class", "code", "retryable", "status", "in_stream"),
    CASES,
    ids=[f"{c[0].name}{'-stream' if c[1] else ''}" for c in CASES],
)
def test_boto3_raises_and_we_read_it(
    fake: FakeProvider,
    fault: Fault,
    stream: bool,
    raised_class: str,
    code: str,
    retryable: bool,
    status: int | None,
    in_stream: bool | None,
) -> None:
    fake.fail(fault)
    error = raised(lambda: _call(fake.url, stream))
    assert type(error).__name__ == raised_class
    detail = rc.classify(error)
    seen = (detail.code, detail.retryable, detail.status, detail.source)
    assert seen == (code, retryable, status, "bedrock")
    assert detail.details.get("in_stream") == in_stream
    assert len(fake.requests) == 1  # botocore's own retries are off


def test_an_http_error_keeps_the_aws_code_request_id_and_operation(fake: FakeProvider) -> None:
    fake.fail(Fault.rate_limited())
    detail = rc.classify(raised(lambda: _call(fake.url, False)))
    assert detail.details == {"error_code": "ThrottlingException", "request_id": "req_fake_0001",
                              "operation": "Converse"}  # fmt: skip
    assert detail.message == "Too many requests, please wait before trying again."


def test_an_in_stream_exceptions_lower_camel_code_reads_as_the_http_one(
    fake: FakeProvider,
) -> None:
    fake.fail(Fault.stream_overloaded())
    stream = _client(fake.url).converse_stream(modelId=MODEL, messages=MESSAGES)["stream"]
    seen: list[str] = []
    error = raised(lambda: seen.extend(next(iter(event)) for event in stream))
    assert seen == ["messageStart", "contentBlockDelta"]  # mid-stream, after content
    detail = rc.classify(error)
    assert detail.details == {"error_code": "ServiceUnavailableException",
                              "operation": "ConverseStream", "in_stream": True}  # fmt: skip


def _aws_error(status: int, kind: str, message: str, **headers: str) -> Fault:
    return Fault.status(status, {"message": message}, {"x-amzn-ErrorType": kind, **headers})


# (status, x-amzn-ErrorType, message, class raised, code)
OTHER_ERRORS = [
    (404, "ResourceNotFoundException", "Model not found.", "ResourceNotFoundException",
     "provider_model_not_found"),
    (403, "AccessDeniedException", "You don't have access to the model with the specified "
     "model ID.", "AccessDeniedException", "provider_permission_denied"),
    (429, "ModelNotReadyException", "The model is not ready to serve inference requests.",
     "ModelNotReadyException", "provider_overloaded"),
    (408, "ModelTimeoutException", "Model has timed out in processing the request.",
     "ModelTimeoutException", "provider_timeout"),
    (424, "ModelErrorException", "The model encountered an error processing the request.",
     "ModelErrorException", "provider_server_error"),
    (400, "ServiceQuotaExceededException", "Your request exceeds the service quota for your "
     "account.", "ServiceQuotaExceededException", "provider_quota_exceeded"),
    (403, "ExpiredTokenException", "The security token included in the request is expired",
     "ClientError", "provider_auth_failed"),
    (400, "ValidationException", "The model returned the following errors: prompt is too "
     "long: 215000 tokens > 200000 maximum", "ValidationException", "provider_context_too_long"),
    (400, "ValidationException", "Too many input tokens. Max input tokens: 8192, request input"
     " token count: 9000", "ValidationException", "provider_context_too_long"),
    # Bedrock's sentences are anchored: a value quoted later in the message decides nothing.
    (400, "ValidationException", "1 validation error detected: Value 'Input is too long' at "
     "'messages.1.member.content' failed to satisfy constraint", "ValidationException",
     "provider_invalid_request"),
    (429, "ThrottlingException", "Too many tokens, please wait before trying again.",
     "ThrottlingException", "provider_rate_limited"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("status", "kind", "message", "raised_class", "code"),
    OTHER_ERRORS,
    ids=[f"{row[1]}-{index}" for index, row in enumerate(OTHER_ERRORS)],
)
def test_every_bedrock_error_code_through_the_real_client(
    fake: FakeProvider, status: int, kind: str, message: str, raised_class: str, code: str
) -> None:
    fake.fail(_aws_error(status, kind, message))
    error = raised(lambda: _call(fake.url, False))
    assert type(error).__name__ == raised_class
    detail = rc.classify(error)
    assert (detail.code, detail.status, detail.source) == (code, status, "bedrock")
    assert detail.retryable is rc.codes[code].retryable


def test_an_expired_token_is_named_as_such(fake: FakeProvider) -> None:
    fake.fail(_aws_error(403, "ExpiredTokenException", "The security token included in the "
                         "request is expired"))  # fmt: skip
    detail = rc.classify(raised(lambda: _call(fake.url, False)))
    assert (detail.code, detail.details["credentials"], detail.fix_required) == (
        "provider_auth_failed", "expired", rc.codes["provider_auth_failed"].fix_required,
    )  # fmt: skip


def test_a_retry_after_header_is_read_when_bedrock_sends_one(fake: FakeProvider) -> None:
    fake.fail(_aws_error(429, "ThrottlingException", "Too many requests, please wait before "
                         "trying again.", **{"retry-after": "3"}))  # fmt: skip
    detail = rc.classify(raised(lambda: _call(fake.url, False)))
    assert (detail.code, detail.retry_after_ms) == ("provider_rate_limited", 3000)


def test_a_guardrail_is_a_200_that_classify_response_reads(fake: FakeProvider) -> None:
    fake.fail(Fault.content_policy())
    (answer,) = _call(fake.url, False)
    detail = rc.classify_response(answer)
    assert detail is not None
    assert (detail.code, detail.source, detail.details) == (
        "provider_content_filtered", "bedrock", {"stop_reason": "guardrail_intervened"},
    )  # fmt: skip
    fake.fail(Fault.content_policy())
    events = _call(fake.url, True)
    found = [rc.classify_response(event) for event in events]
    assert [d.code if d else None for d in found] == [
        None, None, None, "provider_content_filtered", None,
    ]  # fmt: skip


def test_a_hang_past_the_read_timeout(fake: FakeProvider) -> None:
    for stream in (False, True):
        fake.fail(Fault.hang(5))
        error = raised(lambda stream=stream: _call(fake.url, stream, read_timeout=0.5))
        assert type(error) is botocore.exceptions.ReadTimeoutError
        detail = rc.classify(error)
        assert (detail.code, detail.retryable, detail.source, detail.details["phase"]) == (
            "provider_timeout", True, "bedrock", "read",
        )  # fmt: skip


def test_nothing_listening_is_unreachable() -> None:
    error = raised(lambda: _call(f"http://127.0.0.1:{free_port()}", False))
    assert type(error) is botocore.exceptions.EndpointConnectionError
    detail = rc.classify(error)
    assert (detail.code, detail.retryable, detail.source, detail.details["phase"]) == (
        "provider_unreachable", True, "bedrock", "connect",
    )  # fmt: skip


@pytest.fixture
def no_aws_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """No credentials anywhere botocore looks: environment, files, SSO, instance metadata."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
                 "AWS_DEFAULT_PROFILE", "AWS_BEARER_TOKEN_BEDROCK", "AWS_CONTAINER_CREDENTIALS_"
                 "RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_WEB_IDENTITY_TOKEN_"
                 "FILE", "AWS_ROLE_ARN"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


@pytest.mark.usefixtures("no_aws_credentials")
def test_missing_credentials_fail_before_anything_is_sent(fake: FakeProvider) -> None:
    client = boto3.Session().client("bedrock-runtime", endpoint_url=fake.url,
                                    region_name="us-east-1")  # fmt: skip
    error = raised(lambda: client.converse(modelId=MODEL, messages=MESSAGES))
    assert type(error) is botocore.exceptions.NoCredentialsError
    detail = rc.classify(error)
    assert (detail.code, detail.retryable, detail.source, detail.details) == (
        "provider_auth_failed", False, "aws", {"credentials": "missing"},
    )  # fmt: skip
    assert detail.fix_command is None  # no command is right for every way of signing in
    assert fake.requests == []


@pytest.mark.usefixtures("no_aws_credentials")
def test_partial_credentials(monkeypatch: pytest.MonkeyPatch, fake: FakeProvider) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", KEY_ID)
    error = raised(lambda: boto3.Session().client("bedrock-runtime", endpoint_url=fake.url,
                                                  region_name="us-east-1"))  # fmt: skip
    assert type(error) is botocore.exceptions.PartialCredentialsError
    detail = rc.classify(error)
    assert (detail.code, detail.source, detail.details) == (
        "provider_auth_failed", "aws", {"credentials": "partial"},
    )  # fmt: skip


def test_a_normal_answer_stream_and_tool_call(fake: FakeProvider) -> None:
    (answer,) = _call(fake.url, False)
    assert (answer["output"]["message"]["content"], answer["stopReason"]) == (
        [{"text": "Hello from FakeProvider."}], "end_turn",
    )  # fmt: skip
    assert rc.classify_response(answer) is None
    events = _call(fake.url, True)
    assert [next(iter(e)) for e in events] == [
        "messageStart", *["contentBlockDelta"] * 3, "contentBlockStop", "messageStop", "metadata",
    ]  # fmt: skip
    fake.reply(Reply.tool_call("get_weather", {"city": "Paris"}))
    (call,) = _call(fake.url, False)
    (block,) = call["output"]["message"]["content"]
    assert (block["toolUse"]["name"], block["toolUse"]["input"], call["stopReason"]) == (
        "get_weather", {"city": "Paris"}, "tool_use",
    )  # fmt: skip
    streamed = _call(fake.url, True)
    start = streamed[1]["contentBlockStart"]["start"]["toolUse"]
    delta = streamed[2]["contentBlockDelta"]["delta"]["toolUse"]["input"]
    assert (start["name"], delta) == ("get_weather", '{"city":"Paris"}')


def test_the_fake_reads_the_model_from_the_path(fake: FakeProvider) -> None:
    _call(fake.url, False)
    (request,) = fake.requests
    assert request.path == "/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse"
    assert request.model == MODEL


# --- one retry layer: ours, around the real client ------------------------------------------


def _ask(fake: FakeProvider, stream: bool = False) -> str:
    answer = _call(fake.url, stream)
    if stream:
        return "".join(e["contentBlockDelta"]["delta"]["text"] for e in answer
                       if "contentBlockDelta" in e)  # fmt: skip
    return str(answer[0]["output"]["message"]["content"][0]["text"])


def test_retry_waits_out_a_throttle_and_stops_at_once_on_a_daily_quota(
    fake: FakeProvider,
) -> None:
    sleeps: list[float] = []
    for stream in (False, True):  # an HTTP 429, then an in-stream throttlingException
        fake.fail(Fault.rate_limited())
        answer = rc.retry(sleep=sleeps.append, rng=lambda: 1.0).call(_ask, fake, stream)
        assert answer == "Hello from FakeProvider."
    assert sleeps == [1.0, 1.0]
    assert [r.fault for r in fake.requests] == ["rate_limited", None, "rate_limited", None]
    fake.reset()
    fake.fail(Fault.insufficient_quota(), times=None)
    error = raised(lambda: rc.retry(sleep=sleeps.append).call(_ask, fake))
    assert rc.classify(error).code == "provider_quota_exceeded"
    assert len(fake.requests) == 1  # no futile call: a daily quota is not waited out
    assert sleeps == [1.0, 1.0]


def test_the_rate_limit_mode_tells_boto3_how_long_to_wait(fake: FakeProvider) -> None:
    fake.rate_limit(RateLimit(1, per=2.0))
    _call(fake.url, False)
    detail = rc.classify(raised(lambda: _call(fake.url, False)))
    assert detail.code == "provider_rate_limited"
    assert detail.retry_after_ms is not None and 1000 <= detail.retry_after_ms <= 2000


# --- without a server: sdk_error("bedrock") is what the loopback gives --------------------------

SUCCESSES = {("content_policy", False), ("content_policy", True), ("cut_stream", False)}
IN_MEMORY = [(name, stream) for name in FAULT_NAMES for stream in (False, True)]


@pytest.mark.parametrize(("name", "stream"), IN_MEMORY,
                         ids=[f"{n}{'-stream' if s else ''}" for n, s in IN_MEMORY])  # fmt: skip
def test_sdk_error_gives_what_the_loopback_gives(
    fake: FakeProvider, name: str, stream: bool
) -> None:
    fault = Fault.hang(5) if name == "hang" else Fault.named(name)
    if (name, stream) in SUCCESSES:
        with pytest.raises(ValueError, match="with success"):
            sdk_error("bedrock", fault, stream=stream)
        return
    fake.fail(fault)
    real = raised(lambda: _call(fake.url, stream, read_timeout=0.5))
    made = sdk_error("bedrock", fault, stream=stream, model=MODEL)
    assert type(made) is type(real)
    seen, expected = rc.classify(made), rc.classify(real)
    assert (seen.code, seen.retryable, seen.status, seen.source) == (
        expected.code, expected.retryable, expected.status, expected.source,
    )  # fmt: skip


# --- the event-stream framing, read back by botocore's own parser ------------------------------

header_names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1,
                       max_size=20).filter(lambda n: len(n.encode()) <= 255)  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(
    headers=st.dictionaries(header_names, st.text(max_size=60), max_size=5),
    payload=st.binary(max_size=2048),
    split=st.integers(min_value=1, max_value=64),
)
def test_every_frame_we_write_is_read_back_whole_by_botocore(
    headers: dict[str, str], payload: bytes, split: int
) -> None:
    from botocore.eventstream import EventStreamBuffer

    frames = event_message(headers, payload) * 2
    buffer = EventStreamBuffer()
    for start in range(0, len(frames), split):  # arrives in pieces, as chunks do
        buffer.add_data(frames[start : start + split])
    messages = list(buffer)
    assert [(m.headers, m.payload) for m in messages] == [(headers, payload)] * 2


# --- botocore errors made by hand (unit tests of the handler) ---------------------------------


def _client_error(response: Any, operation: str = "Converse") -> Exception:
    return botocore.exceptions.ClientError(response, operation)


def test_a_model_stream_error_in_a_stream() -> None:
    error = botocore.exceptions.EventStreamError(
        {"Error": {"Code": "modelStreamErrorException", "Message": "The model stream failed"}},
        "ConverseStream",
    )
    detail = rc.classify(error)
    assert (detail.code, detail.retryable, detail.details["in_stream"]) == (
        "provider_server_error", True, True,
    )  # fmt: skip


def test_another_aws_service_keeps_the_generic_codes() -> None:
    missing = _client_error({"Error": {"Code": "NoSuchKey", "Message": "The key does not exist"},
                             "ResponseMetadata": {"HTTPStatusCode": 404}}, "GetObject")  # fmt: skip
    expired = _client_error({"Error": {"Code": "ExpiredToken", "Message": "expired"},
                             "ResponseMetadata": {"HTTPStatusCode": 400}}, "GetObject")  # fmt: skip
    meta = {"HTTPStatusCode": 503, "HTTPHeaders": {"retry-after": "2"}}
    slow = _client_error({"Error": {"Code": "SlowDown", "Message": "Please reduce your rate"},
                          "ResponseMetadata": meta}, "PutObject")  # fmt: skip
    limited = rc.classify(slow)
    assert (limited.code, limited.retryable, limited.retry_after_ms, limited.status) == (
        "rate_limited", True, 2000, 503,
    )  # fmt: skip
    found, auth = rc.classify(missing), rc.classify(expired)
    assert (found.code, found.source, found.details["error_code"]) == ("not_found", None,
                                                                        "NoSuchKey")  # fmt: skip
    assert (auth.code, auth.source, auth.details["credentials"]) == (
        "provider_auth_failed", "aws", "expired",
    )  # fmt: skip


def test_an_aws_key_in_a_message_is_scrubbed() -> None:
    text = f"The security token {KEY_ID} with secret {SECRET} is invalid."
    error = _client_error({"Error": {"Code": "UnrecognizedClientException", "Message": text},
                           "ResponseMetadata": {"HTTPStatusCode": 403}})  # fmt: skip
    detail = rc.classify(error)
    assert detail.code == "provider_auth_failed"
    assert KEY_ID not in detail.message
    assert KEY_ID not in json.dumps(detail.to_dict()) and "Converse" in json.dumps(detail.to_dict())


def test_a_urllib3_error_not_raised_through_botocore_is_not_ours() -> None:
    import urllib3.exceptions

    error = urllib3.exceptions.ProtocolError("Response ended prematurely")
    assert URLLIB3_CLASSES["ProtocolError"](error) is None


# --- forged answers: any shape ---------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=12), inner,
                                                                max_size=3),
    max_leaves=12,
)  # fmt: skip
error_codes = st.text() | st.sampled_from([
    "ThrottlingException", "throttlingException", "ValidationException", "ExpiredToken",
    "AccessDeniedException", "", "x" * 500,
])  # fmt: skip
forged_errors = st.fixed_dictionaries(
    {},
    optional={
        "Code": error_codes | json_values,
        "Message": st.text(max_size=300) | json_values,
    },
)
forged_meta = st.fixed_dictionaries(
    {},
    optional={
        "HTTPStatusCode": st.integers() | st.floats() | st.booleans() | json_values,
        "HTTPHeaders": st.dictionaries(st.text(max_size=12), st.text(max_size=20)) | json_values,
        "RequestId": st.text(max_size=40) | json_values,
    },
)
forged_responses = (
    st.fixed_dictionaries({}, optional={"Error": forged_errors | json_values,
                                        "ResponseMetadata": forged_meta | json_values})
    | json_values
)  # fmt: skip
operations = st.sampled_from(["Converse", "ConverseStream", "GetObject", ""]) | st.text(max_size=20)


@settings(max_examples=300, deadline=None)
@given(response=forged_responses, operation=operations, stream=st.booleans())
def test_a_forged_client_error_never_raises_and_gets_a_registered_code(
    response: Any, operation: Any, stream: bool
) -> None:
    kind = botocore.exceptions.EventStreamError if stream else botocore.exceptions.ClientError
    try:
        error = kind(response, operation)
    except Exception:  # botocore's own constructor refuses some shapes: forge it without
        error = kind.__new__(kind)
        error.response, error.operation_name = response, operation
    logger = logging.getLogger("recoverable")
    handler = _FailOnWarning()
    logger.addHandler(handler)
    try:
        detail = rc.classify(error)
        direct = BOTOCORE_CLASSES["ClientError"](error)  # the handler itself never raises
    finally:
        logger.removeHandler(handler)
    assert detail.code in rc.codes
    assert direct is None or direct.code in rc.codes
    assert detail.retry_after_ms is None or detail.retry_after_ms >= 0
    json.dumps(detail.to_dict())


class _FailOnWarning(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        raise AssertionError(f"a classifier stage misbehaved: {record.getMessage()}")
