"""classify() over what Python raises, the cause chain, groups, and objects of any kind."""

from __future__ import annotations

import asyncio
import concurrent.futures
import errno
import socket
import ssl
import subprocess
import sys
import urllib.error
from typing import Any

import pydantic
import pytest
import tenacity

import recoverable as rc

from ..support.providers import free_port

GENERIC = rc.codes["unknown"].user_message


@pytest.mark.parametrize(
    ("error", "code", "retryable"),
    [
        (ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused"), "network_error", True),
        (ConnectionResetError(errno.ECONNRESET, "Connection reset by peer"), "network_error", True),
        (BrokenPipeError(errno.EPIPE, "Broken pipe"), "network_error", True),
        (socket.gaierror(socket.EAI_NONAME, "Name or service not known"), "network_error", True),
        (OSError(errno.EHOSTUNREACH, "No route to host"), "network_error", True),
        (ssl.SSLError("bad record mac"), "network_error", True),
        (ssl.SSLCertVerificationError("certificate verify failed"), "precondition_failed", False),
        (urllib.error.URLError(ConnectionRefusedError(111, "refused")), "network_error", True),
        (TimeoutError("timed out"), "timeout", False),
        (TimeoutError(), "timeout", False),
        (OSError(errno.ETIMEDOUT, "Connection timed out"), "timeout", False),
        (subprocess.TimeoutExpired(["x"], 5), "tool_timeout", False),
        (subprocess.CalledProcessError(1, ["x"]), "tool_execution_failed", False),
        (subprocess.CalledProcessError(-9, ["x"]), "tool_killed", False),
        (subprocess.CalledProcessError(127, "x --y"), "tool_not_found", False),
        (asyncio.CancelledError(), "run_cancelled", False),
        (concurrent.futures.CancelledError(), "run_cancelled", False),
        (KeyboardInterrupt(), "run_cancelled", False),
        (SystemExit(1), "run_cancelled", False),
        (PermissionError(errno.EACCES, "Permission denied"), "permission_denied", False),
        (OSError(errno.EPERM, "Operation not permitted"), "permission_denied", False),
        (FileNotFoundError(errno.ENOENT, "No such file"), "not_found", False),
        (FileExistsError(errno.EEXIST, "File exists"), "conflict", False),
        (OSError(errno.ENOSPC, "No space left on device"), "unknown", False),
        (KeyError("k"), "unknown", False),
        (ValueError("bad value"), "unknown", False),
        (ZeroDivisionError("division by zero"), "unknown", False),
        (RuntimeError("boom"), "unknown", False),
    ],
    ids=lambda value: type(value).__name__ if isinstance(value, BaseException) else str(value),
)
def test_python_errors(error: BaseException, code: str, retryable: bool) -> None:
    detail = rc.classify(error)
    assert (detail.code, detail.retryable) == (code, retryable)
    assert detail.user_message == rc.codes[code].user_message
    assert detail.retry_after_ms is None


def test_an_unknown_error_keeps_its_message_and_the_generic_sentence() -> None:
    detail = rc.classify(ValueError("the parser choked on line 3"))
    assert detail.message == "the parser choked on line 3"
    assert detail.user_message == GENERIC
    assert detail.details == {"exception_type": "ValueError"}
    assert rc.classify_known(ValueError("x")) is None


def test_pydantic_validation_error_is_invalid_input() -> None:
    class Model(pydantic.BaseModel):
        n: int

    with pytest.raises(pydantic.ValidationError) as info:
        Model(n="nope")  # type: ignore[arg-type]
    assert rc.classify(info.value).code == "invalid_input"


def test_a_real_refused_connection_on_loopback() -> None:
    with pytest.raises(ConnectionRefusedError) as info:
        socket.create_connection(("127.0.0.1", free_port()), timeout=2)
    detail = rc.classify(info.value)
    assert (detail.code, detail.retryable, detail.details) == ("network_error", True, {})


async def test_a_real_cancelled_task_is_run_cancelled_never_retryable() -> None:
    task = asyncio.create_task(asyncio.sleep(10))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError) as info:
        await task
    detail = rc.classify(info.value)
    assert (detail.code, detail.retryable, detail.recovery) == ("run_cancelled", False, "stop")


async def test_a_real_asyncio_timeout_is_timeout() -> None:
    with pytest.raises(TimeoutError) as info:
        async with asyncio.timeout(0.001):
            await asyncio.sleep(1)
    # asyncio.timeout raises TimeoutError from the task's CancelledError: the outer wins.
    assert rc.classify(info.value).code == "timeout"


# --- the cause chain ----------------------------------------------------------------------


def _raise(outer: BaseException, inner: BaseException) -> BaseException:
    """`outer` raised `from` `inner`, as a real traceback would carry it."""
    try:
        try:
            raise inner
        except BaseException as caught:
            raise outer from caught
    except BaseException as final:
        return final


def test_explicit_cause_is_classified_and_the_outer_message_kept() -> None:
    error = _raise(RuntimeError("fetch failed"), ConnectionRefusedError(111, "refused"))
    detail = rc.classify(error)
    assert (detail.code, detail.message, detail.retryable) == (
        "network_error",
        "fetch failed",
        True,
    )
    assert isinstance(detail.cause, rc.ErrorDetail)
    assert (detail.cause.code, detail.cause.message) == ("network_error", "[Errno 111] refused")


def test_implicit_context_is_walked() -> None:
    try:
        try:
            raise ConnectionResetError(104, "reset")
        except ConnectionResetError:
            raise ValueError("while handling")  # noqa: B904 -- the implicit context is the point
    except ValueError as error:
        assert error.__context__ is not None
        assert rc.classify(error).code == "network_error"


def test_suppressed_context_is_not_walked() -> None:
    try:
        try:
            raise ConnectionResetError(104, "reset")
        except ConnectionResetError:
            raise ValueError("clean") from None
    except ValueError as error:
        assert rc.classify(error).code == "unknown"


def test_a_recognised_outer_error_records_the_rest_of_the_chain_as_cause() -> None:
    inner = KeyError("session")
    outer = rc.RecoverableError("tool_execution_failed", "tool broke")
    outer.__cause__ = inner
    detail = rc.classify(outer)
    assert (detail.code, detail.message) == ("tool_execution_failed", "tool broke")
    assert detail.cause == "KeyError: 'session'"  # the evidence, as text


def test_the_rest_of_a_long_chain_is_kept_as_text() -> None:
    error = _chain_of(3, KeyError("k"))
    outer = rc.RecoverableError("conflict", "stale")
    outer.__cause__ = error
    assert (
        rc.classify(outer).cause == "RuntimeError: wrap 1 <- RuntimeError: wrap 0 <- KeyError: 'k'"
    )


def test_our_own_error_wins_over_what_it_wraps() -> None:
    error = _raise(rc.RecoverableError("conflict", "stale"), ConnectionRefusedError())
    assert rc.classify(error).code == "conflict"


def test_a_cancel_deep_in_the_chain_wins_over_unknown_wrappers() -> None:
    error = _raise(RuntimeError("worker stopped"), asyncio.CancelledError())
    assert rc.classify(error).code == "run_cancelled"


def test_cycles_in_the_chain_are_cut() -> None:
    first, second = ValueError("a"), ValueError("b")
    first.__cause__, second.__cause__ = second, first
    assert rc.classify(first).code == "unknown"
    first.__cause__ = ConnectionRefusedError()
    first.__cause__.__cause__ = first
    assert rc.classify(first).code == "network_error"


def _chain_of(depth: int, bottom: BaseException) -> BaseException:
    error = bottom
    for index in range(depth - 1):
        wrapper = RuntimeError(f"wrap {index}")
        wrapper.__cause__ = error
        error = wrapper
    return error


def test_the_chain_is_walked_eight_links_deep_and_no_further() -> None:
    assert rc.classify(_chain_of(8, ConnectionRefusedError())).code == "network_error"
    assert rc.classify(_chain_of(9, ConnectionRefusedError())).code == "unknown"
    assert rc.classify(_chain_of(5000, ConnectionRefusedError())).code == "unknown"


# --- groups and retry wrappers ----------------------------------------------------------------


def test_a_group_takes_the_failure_a_retry_cannot_fix() -> None:
    group = ExceptionGroup("two", [ConnectionResetError(), PermissionError("no")])
    detail = rc.classify(group)
    assert (detail.code, detail.retryable) == ("permission_denied", False)
    assert detail.details["group_size"] == 2
    assert detail.details["group_codes"] == ["network_error", "permission_denied"]


def test_a_cancel_in_a_group_wins() -> None:
    group = BaseExceptionGroup("g", [ConnectionResetError(), asyncio.CancelledError()])
    assert rc.classify(group).code == "run_cancelled"


def test_a_group_of_only_unknowns_is_unknown() -> None:
    assert rc.classify(ExceptionGroup("g", [ValueError(), KeyError()])).code == "unknown"


def test_a_group_of_ten_thousand_members() -> None:
    group = ExceptionGroup("many", [ConnectionResetError(104, "r") for _ in range(10_000)])
    detail = rc.classify(group)
    assert (detail.code, detail.details["group_size"]) == ("network_error", 10_000)


def test_deeply_nested_groups_do_not_raise() -> None:
    group: BaseException = ConnectionResetError()
    for _ in range(2000):
        group = ExceptionGroup("nest", [group])  # type: ignore[list-item]
    assert rc.classify(group).code == "unknown"  # too deep to look: not guessed


async def test_task_group_failures() -> None:
    async def refused() -> None:
        raise ConnectionRefusedError(111, "refused")

    with pytest.raises(ExceptionGroup) as info:
        async with asyncio.TaskGroup() as tasks:
            tasks.create_task(refused())
    assert rc.classify(info.value).code == "network_error"


def test_an_exhausted_tenacity_retry_is_no_longer_retryable() -> None:
    calls = []

    @tenacity.retry(stop=tenacity.stop_after_attempt(3), wait=tenacity.wait_none())
    def flaky() -> None:
        calls.append(1)
        raise ConnectionRefusedError(111, "refused")

    with pytest.raises(tenacity.RetryError) as info:
        flaky()
    detail = rc.classify(info.value)
    assert len(calls) == 3
    assert (detail.code, detail.retryable, detail.retry_after_ms) == ("network_error", False, None)
    assert detail.details["attempts"] == 3
    assert detail.details["retries_exhausted"] is True


# --- anything at all --------------------------------------------------------------------


class _Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no")


class _Hostile:
    def __str__(self) -> str:
        raise RuntimeError("no")

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(name)


class _HostileError(Exception):
    @property
    def status_code(self) -> int:
        raise RuntimeError("no")

    def __str__(self) -> str:
        raise ValueError("no")


@pytest.mark.parametrize(
    ("obj", "code", "message"),
    [
        (None, "unknown", "no error was given"),
        (42, "unknown", "42"),
        (_Unprintable(), "unknown", "<unprintable _Unprintable>"),
        (_Hostile(), "unknown", "<unprintable _Hostile>"),
        (_HostileError(), "unknown", "<unprintable _HostileError>"),
        ("something odd happened", "unknown", "something odd happened"),
        ("Connection refused", "network_error", "Connection refused"),
        ({"no": "code"}, "unknown", "{'no': 'code'}"),
        ({"code": "conflict", "message": "stale row"}, "conflict", "stale row"),
        (ValueError, "unknown", "<class 'ValueError'>"),
    ],
    ids=repr,
)
def test_classify_never_raises(obj: object, code: str, message: str) -> None:
    detail = rc.classify(obj)
    assert (detail.code, detail.message) == (code, message)


def test_classify_returns_a_detail_as_is() -> None:
    detail = rc.ErrorDetail.create("conflict", "x")
    assert rc.classify(detail) is detail
    assert rc.classify(rc.RecoverableError(detail)) is detail


@pytest.mark.parametrize(
    "text",
    [
        "foo.go:429: unexpected token",
        "Error in rate limit module",
        "user asked: why do I get 'rate limit exceeded'?",
        "the prompt is too long for my taste",
        "429",
    ],
)
def test_text_that_merely_mentions_a_failure_is_not_classified(text: str) -> None:
    assert rc.classify(text).code == "unknown"
    assert rc.classify(RuntimeError(text)).code == "unknown"


def test_user_stages_run_first_and_can_be_removed() -> None:
    class QuotaHit(Exception):
        pass

    def stage(error: BaseException) -> rc.ErrorDetail | None:
        if isinstance(error, QuotaHit):
            return rc.ErrorDetail.create("payment_required", str(error))
        if isinstance(error, KeyError):
            raise RuntimeError("a broken stage is skipped")
        return None

    assert rc.classify(QuotaHit("out of credit")).code == "unknown"  # its route is cached now
    remove = rc.add_classifier(stage)
    try:
        assert rc.classify(QuotaHit("out of credit")).code == "payment_required"
        assert rc.classify(KeyError("k")).code == "unknown"
        assert rc.classify(ConnectionRefusedError()).code == "network_error"
    finally:
        remove()
    assert rc.classify(QuotaHit("out of credit")).code == "unknown"


def test_importing_and_classifying_loads_no_sdk() -> None:
    code = (
        "import sys, recoverable as rc\n"
        "rc.classify(ConnectionRefusedError()); rc.classify('Error code: 429')\n"
        "heavy = {'openai', 'anthropic', 'httpx', 'httpx2', 'google', 'litellm', 'pydantic_ai',"
        " 'tenacity', 'claude_agent_sdk', 'pydantic', 'boto3', 'botocore', 'urllib3'}\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"
