"""grpcio: a real gRPC server on 127.0.0.1 (a generic handler with bytes in and out: no
codegen) aborts with each status, and a real grpc client (sync and `grpc.aio`) raises its
`RpcError`; classify reads its `code()`, `details()` and the `google.rpc.Status` of its
trailing metadata (built with the real protobuf classes, as grpcio-status does).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from concurrent import futures
from typing import Any

import grpc
import grpc.aio
import pytest
from google.protobuf import any_pb2, duration_pb2
from google.rpc import error_details_pb2, status_pb2
from hypothesis import given, settings
from hypothesis import strategies as st

import recoverable as rc

from ...support.providers import free_port, raised

METHOD = "/fake.Model/Generate"
DETAILS_KEY = "grpc-status-details-bin"


def _packed(message: Any) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(message)
    return packed


def _rich_status(code: grpc.StatusCode, message: str, *details: Any) -> bytes:
    status = status_pb2.Status(code=code.value[0], message=message,
                               details=[_packed(d) for d in details])  # fmt: skip
    return status.SerializeToString()


def _retry(seconds: int) -> Any:
    return error_details_pb2.RetryInfo(retry_delay=duration_pb2.Duration(seconds=seconds))


def _quota(quota_id: str) -> Any:
    violation = error_details_pb2.QuotaFailure.Violation(quota_id=quota_id)
    return error_details_pb2.QuotaFailure(violations=[violation])


RICH: dict[bytes, bytes] = {
    b"per-minute": _rich_status(grpc.StatusCode.RESOURCE_EXHAUSTED, "Quota exceeded",
                                _quota("GenerateRequestsPerMinutePerProjectPerModel"),
                                _retry(12)),
    b"per-day": _rich_status(grpc.StatusCode.RESOURCE_EXHAUSTED, "Quota exceeded",
                             _quota("GenerateRequestsPerDayPerProjectPerModel")),
    b"bad-key": _rich_status(grpc.StatusCode.INVALID_ARGUMENT, "API key not valid",
                             error_details_pb2.ErrorInfo(reason="API_KEY_INVALID")),
}  # fmt: skip
RICH_CODES = {b"per-minute": grpc.StatusCode.RESOURCE_EXHAUSTED,
              b"per-day": grpc.StatusCode.RESOURCE_EXHAUSTED,
              b"bad-key": grpc.StatusCode.INVALID_ARGUMENT}  # fmt: skip


def _generate(request: bytes, context: grpc.ServicerContext) -> bytes:
    if request in RICH:  # the details are the Status's own message, as grpcio-status checks
        context.set_trailing_metadata(((DETAILS_KEY, RICH[request]),))
        context.abort(RICH_CODES[request], status_pb2.Status.FromString(RICH[request]).message)
    if request == b"slow":
        time.sleep(2)
        return b"late"
    name, _, details = request.decode().partition(":")
    if name == "OK":
        return b"hello"
    context.abort(grpc.StatusCode[name], details)
    raise AssertionError("abort returns nothing")


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    handler = grpc.method_handlers_generic_handler(
        "fake.Model", {"Generate": grpc.unary_unary_rpc_method_handler(_generate)}
    )
    pool = futures.ThreadPoolExecutor(max_workers=4)
    grpc_server = grpc.server(pool, handlers=(handler,))
    port = grpc_server.add_insecure_port("127.0.0.1:0")
    grpc_server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        grpc_server.stop(grace=None).wait()
        pool.shutdown(wait=True)


def _call(target: str, payload: bytes, timeout: float = 5) -> bytes:
    with grpc.insecure_channel(target) as channel:
        stub = channel.unary_unary(METHOD)
        answer: bytes = stub(payload, timeout=timeout)
        return answer


# status name -> (code, retryable, HTTP status)
STATUSES = [
    ("RESOURCE_EXHAUSTED", "provider_rate_limited", True, 429),
    ("UNAVAILABLE", "provider_overloaded", True, 503),
    ("DEADLINE_EXCEEDED", "provider_timeout", True, 504),
    ("INVALID_ARGUMENT", "provider_invalid_request", False, 400),
    ("FAILED_PRECONDITION", "provider_invalid_request", False, 400),
    ("OUT_OF_RANGE", "provider_invalid_request", False, 400),
    ("PERMISSION_DENIED", "provider_permission_denied", False, 403),
    ("UNAUTHENTICATED", "provider_auth_failed", False, 401),
    ("NOT_FOUND", "provider_model_not_found", False, 404),
    ("INTERNAL", "provider_server_error", True, 500),
    ("UNKNOWN", "provider_server_error", True, 500),
    ("DATA_LOSS", "provider_server_error", True, 500),
    ("ABORTED", "provider_server_error", True, 409),
    ("UNIMPLEMENTED", "provider_server_error", True, 501),
]


@pytest.mark.parametrize(("name", "code", "retryable", "status"), STATUSES)
def test_the_server_aborts_and_the_client_raises(
    server: str, name: str, code: str, retryable: bool, status: int
) -> None:
    error = raised(lambda: _call(server, f"{name}:the call failed".encode()))
    assert type(error).__name__ == "_InactiveRpcError"
    detail = rc.classify(error)
    assert (detail.code, detail.retryable, detail.status, detail.source, detail.message) == (
        code, retryable, status, "grpc", "the call failed")  # fmt: skip
    assert detail.details["google_status"] == name


@pytest.mark.parametrize(
    ("payload", "code", "retryable", "retry_after_ms"),
    [
        (b"per-minute", "provider_rate_limited", True, 12000),
        (b"per-day", "provider_quota_exceeded", False, None),
        (b"bad-key", "provider_auth_failed", False, None),
        (
            b"INVALID_ARGUMENT:The input token count (1048577) exceeds the maximum number of "
            b"tokens allowed (1048576).",
            "provider_context_too_long",
            False,
            None,
        ),
    ],
    ids=["per-minute", "per-day", "bad-key", "context"],
)
def test_the_status_details_in_the_trailing_metadata(
    server: str, payload: bytes, code: str, retryable: bool, retry_after_ms: int | None
) -> None:
    detail = rc.classify(raised(lambda: _call(server, payload)))
    assert (detail.code, detail.retryable, detail.retry_after_ms) == (
        code, retryable, retry_after_ms)  # fmt: skip


def test_the_client_s_own_deadline(server: str) -> None:
    error = raised(lambda: _call(server, b"slow", timeout=0.3))
    detail = rc.classify(error)
    assert (detail.code, detail.retryable, detail.status) == ("provider_timeout", True, 504)


def test_nothing_listening_is_unreachable() -> None:
    error = raised(lambda: _call(f"127.0.0.1:{free_port()}", b"OK", timeout=3))
    detail = rc.classify(error)
    assert (detail.code, detail.retryable, detail.source, detail.details) == (
        "provider_unreachable", True, "grpc", {"phase": "connect"})  # fmt: skip


def test_a_cancelled_call_is_the_caller_s_cancel(server: str) -> None:
    with grpc.insecure_channel(server) as channel:
        future = channel.unary_unary(METHOD).future(b"slow")
        future.cancel()
        error = raised(future.result)
    detail = rc.classify(error)
    assert (detail.code, detail.retryable) == ("run_cancelled", False)


def test_the_aio_client_raises_aio_rpc_error(server: str) -> None:
    async def call() -> bytes:
        async with grpc.aio.insecure_channel(server) as channel:
            answer: bytes = await channel.unary_unary(METHOD)(b"per-minute", timeout=5)
            return answer

    error = raised(lambda: asyncio.run(call()))
    assert type(error).__name__ == "AioRpcError"
    detail = rc.classify(error)
    assert (detail.code, detail.retry_after_ms, detail.details["quota_ids"]) == (
        "provider_rate_limited", 12000, ["GenerateRequestsPerMinutePerProjectPerModel"],
    )  # fmt: skip


def test_a_normal_answer(server: str) -> None:
    assert _call(server, b"OK") == b"hello"


# -- forged errors: whatever code(), details() and trailing metadata say, classify answers ------


class ForgedRpcError(grpc.RpcError):
    def __init__(self, code: Any, details: Any, metadata: Any) -> None:
        self._code, self._details, self._metadata = code, details, metadata

    def code(self) -> Any:
        if isinstance(self._code, BaseException):
            raise self._code
        return self._code

    def details(self) -> Any:
        return self._details

    def trailing_metadata(self) -> Any:
        return self._metadata


codes_given = (
    st.sampled_from(list(grpc.StatusCode))
    | st.integers()
    | st.text(max_size=20)
    | (st.none() | st.just(RuntimeError("boom")) | st.tuples(st.integers(), st.text(max_size=5)))
)
metadata_given = (
    st.none()
    | st.binary(max_size=300).map(lambda b: ((DETAILS_KEY, b),))
    | (st.lists(st.tuples(st.text(max_size=10), st.binary(max_size=20)), max_size=3))
    | (st.sampled_from(list(RICH.values())).map(lambda b: ((DETAILS_KEY, b[: len(b) // 2]),)))
)


@settings(max_examples=300)
@given(
    code=codes_given,
    details=st.none() | st.text(max_size=80) | st.integers(),
    metadata=metadata_given,
)
def test_a_forged_rpc_error_is_classified_without_raising(
    code: Any, details: Any, metadata: Any
) -> None:
    detail = rc.classify(ForgedRpcError(code, details, metadata))
    assert detail.code in rc.codes
    assert detail.retry_after_ms is None or 0 <= detail.retry_after_ms <= 7 * 86_400_000


def test_varints_that_never_end_and_lengths_past_the_end() -> None:
    for raw in (b"\xff" * 1000, b"\x1a\xff\xff\xff\xff\x0f", b"\x1a\x05ab", b"\x0d\x00\x00"):
        error = ForgedRpcError(grpc.StatusCode.RESOURCE_EXHAUSTED, "x", ((DETAILS_KEY, raw),))
        assert rc.classify(error).code == "provider_rate_limited"


# -- the Google Cloud clients' gRPC transports: api_core's wrap_errors around the RpcError ------

WRAPPED = [
    (b"per-minute", "provider_rate_limited", True, 12000),
    (b"per-day", "provider_quota_exceeded", False, None),
    (b"bad-key", "provider_auth_failed", False, None),
    (b"UNAVAILABLE:try later", "provider_overloaded", True, None),
]

# What a Google Cloud client's transport does: the stub wrapped by api_core, the same error
# classified; run in a fresh interpreter so that grpcio-status can be made absent.
_WRAPPED_CALL = """
import json, sys
if sys.argv[3] == "absent":
    sys.modules["grpc_status"] = None  # api_core imports it optionally: now it is not there
import grpc
from google.api_core import exceptions, grpc_helpers
import recoverable as rc
with grpc.insecure_channel(sys.argv[1]) as channel:
    call = grpc_helpers.wrap_errors(channel.unary_unary("/fake.Model/Generate"))
    try:
        call(sys.argv[2].encode(), timeout=5)
    except exceptions.GoogleAPICallError as exc:
        detail = rc.classify(exc)
        first = type(exc.details[0]).__name__ if exc.details else None
        print(json.dumps([type(exc).__name__, first, detail.code, detail.retryable,
                          detail.retry_after_ms, detail.source]))
"""


@pytest.mark.parametrize("grpc_status", ["installed", "absent"])
@pytest.mark.parametrize(("payload", "code", "retryable", "retry_after_ms"), WRAPPED,
                         ids=[w[0].decode() for w in WRAPPED])  # fmt: skip
def test_a_google_cloud_client_s_wrapped_rpc_error_keeps_its_quota_and_wait(
    server: str, grpc_status: str, payload: bytes, code: str, retryable: bool,
    retry_after_ms: int | None,
) -> None:  # fmt: skip
    import json
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _WRAPPED_CALL, server, payload.decode(), grpc_status],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    kind, first_detail, *classified = json.loads(done.stdout)
    assert kind in ("ResourceExhausted", "InvalidArgument", "ServiceUnavailable")
    # With grpcio-status the wrapper's details are proto messages; without it, none at all.
    if payload in RICH and grpc_status == "installed":
        assert first_detail in ("QuotaFailure", "ErrorInfo")
    else:
        assert first_detail is None
    assert classified == [code, retryable, retry_after_ms, "google"]
