"""`rt.read_error` on forged Temporal failures: whatever a failure holds (values of
the wrong type, huge numbers, NaN, cycles of causes and of values, objects whose attributes
raise, subclasses whose properties raise), it never raises, answers a registered code with
that code's own sentence, and what it answers goes back through `rt.to_application_error`.
A table of named attacks, then a hypothesis property over chains of forged links."""

from __future__ import annotations

import contextlib
import itertools
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from temporalio.exceptions import (
    ActivityError,
    ApplicationError,
    CancelledError,
    ChildWorkflowError,
    RetryState,
    TimeoutError,
    TimeoutType,
)

import recoverable as rc
from recoverable._core.codes import validate_fix_command
from recoverable.integrations import temporal as rt

from ..core.test_detail_properties import SETTINGS, json_like, texts
from ..support.temporal_app import activity_error

OURS = {"code": "provider_overloaded", "message": "busy", "retryable": True}  # a real payload


class Hostile:
    """An object every read of which raises (`__class__` too, which `isinstance` asks)."""

    def __getattribute__(self, name: str) -> Any:
        raise RuntimeError(f"read {name}")

    def __str__(self) -> str:
        raise RuntimeError("str")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("eq")

    def __hash__(self) -> int:
        return hash("code")  # meets "code" in a dict: its __eq__ is asked


class RaisingDetails(ApplicationError):
    @property
    def details(self) -> Any:
        raise RuntimeError("details")


class RaisingCause(ApplicationError):
    @property  # type: ignore[override]
    def __cause__(self) -> Any:
        raise RuntimeError("cause")


class ForeignCause(ApplicationError):
    """A cause that is no exception at all (BaseException's own slot refuses one)."""

    @property  # type: ignore[override]
    def __cause__(self) -> Any:
        return Hostile()


class RaisingState(ActivityError):
    @property
    def retry_state(self) -> Any:
        raise RuntimeError("retry_state")


class RaisingType(TimeoutError):
    @property
    def type(self) -> Any:
        raise RuntimeError("type")


class RaisingText(CancelledError):
    def __str__(self) -> str:
        raise RuntimeError("str")


class NotADict(dict[str, Any]):
    def __contains__(self, key: object) -> bool:
        raise RuntimeError("contains")


def cycle() -> BaseException:
    first, second = ApplicationError("a", OURS), ApplicationError("b")
    first.__cause__, second.__cause__ = second, first
    return first


def deep_payload() -> dict[str, Any]:
    payload: dict[str, Any] = {"code": "unknown", "message": "x"}
    for _ in range(5000):  # past the recursion limit
        payload = {"code": "unknown", "message": "x", "cause": payload}
    return payload


def self_holding() -> dict[str, Any]:
    payload: dict[str, Any] = {**OURS, "details": {}}
    payload["details"]["me"] = payload
    return payload


def check(detail: rc.ErrorDetail) -> None:
    """What every answer holds, whatever came in."""
    row = rc.codes[detail.code]  # registered
    assert detail.user_message == row.user_message  # the table's sentence, not the payload's
    if detail.fix_command is not None:
        validate_fix_command(detail.fix_command)
    json.dumps(detail.to_dict(), allow_nan=False)  # strict JSON
    error = rt.to_application_error(detail)  # the writer takes it back, too
    assert error.type == detail.code


@pytest.mark.parametrize(
    ("failure", "code"),
    [
        (ApplicationError("m", {"code": Hostile(), "message": "x"}), "unknown"),
        (ApplicationError("m", {**OURS, "message": Hostile()}), "unknown"),
        (ApplicationError("m", {**OURS, "details": {"a": Hostile()}}), "unknown"),
        (ApplicationError("m", {Hostile(): 1, "message": "x"}), "unknown"),
        (ApplicationError("m", Hostile()), "unknown"),
        (ApplicationError("m", NotADict(OURS)), "unknown"),  # a dict that runs its own code
        (ApplicationError("m", {**OURS, "retry_after_ms": float("nan")}), "provider_overloaded"),
        (ApplicationError("m", {**OURS, "retry_after_ms": 10**400}), "provider_overloaded"),
        (ApplicationError("m", {**OURS, "status": float("inf")}), "unknown"),  # wrong type
        (ApplicationError("m", {**OURS, "details": {"attempt": "x"}}), "provider_overloaded"),
        (ApplicationError("m", self_holding()), "provider_overloaded"),  # a cycle of values
        (ApplicationError("m", deep_payload()), "unknown"),
        (RaisingDetails("m", OURS), "unknown"),
        (RaisingCause("m", OURS), "provider_overloaded"),  # itself read; the walk ends there
        (ForeignCause("m", OURS), "provider_overloaded"),
        (cycle(), "provider_overloaded"),
        (activity_error(RetryState.TIMEOUT, ApplicationError("m", OURS), RaisingState),
         "provider_overloaded"),
        (activity_error([1], ApplicationError("m", OURS)), "provider_overloaded"),  # unhashable
        (activity_error(float("nan"), ApplicationError("m", OURS)), "provider_overloaded"),
        (activity_error(RetryState.TIMEOUT, RaisingType("t", type=None, last_heartbeat_details=[])),
         "timeout"),  # its type unreadable: not an attempt's timeout, still a timeout
        (activity_error(None, RaisingText("c")), "run_cancelled"),
        (ChildWorkflowError("c", namespace="n", workflow_id="w", run_id="r", workflow_type="t",
                            initiated_event_id=1, started_event_id=2, retry_state=Hostile()),
         "unknown"),
    ],
)  # fmt: skip
def test_a_forged_failure_is_read_without_raising(failure: BaseException, code: str) -> None:
    detail = rt.read_error(failure)
    assert detail.code == code
    check(detail)


@pytest.mark.parametrize(
    ("state", "kind", "gave_up"),
    [(RetryState.MAXIMUM_ATTEMPTS_REACHED, ActivityError, True),
     (RetryState.MAXIMUM_ATTEMPTS_REACHED, RaisingState, False), (4, ActivityError, False),
     ("TIMEOUT", ActivityError, False), (Hostile(), ActivityError, False)],
    ids=["real", "raising-property", "an-int", "a-name", "hostile"],
)  # fmt: skip
def test_only_a_real_retry_state_says_the_engine_gave_up(
    state: Any, kind: type[ActivityError], gave_up: bool
) -> None:
    detail = rt.read_error(activity_error(state, ApplicationError("m", OURS), kind))
    assert (detail.code, detail.retryable) == ("provider_overloaded", not gave_up)


# --- the property: chains of forged links ----------------------------------------------------

values = json_like | st.builds(Hostile) | st.sampled_from([float("nan"), 10**400, -(10**400)])
forged = st.fixed_dictionaries(
    {"code": st.sampled_from(["provider_rate_limited", "unknown", "timeout"]) | texts},
    optional={
        "message": texts | values,
        "retryable": values,
        "retry_after_ms": values,
        "details": st.dictionaries(st.text(max_size=8), values, max_size=4),
        "cause": values,
        "fix_command": texts | values,
        "user_message": texts,
    },
)
payloads = forged | values
states = st.sampled_from(list(RetryState)) | values
timeout_types = st.sampled_from(list(TimeoutType)) | values


def _application(message: str, details: list[Any], raising: bool) -> BaseException:
    kind = RaisingDetails if raising else ApplicationError
    return kind(message, *details, type="provider_rate_limited")


links = st.one_of(
    st.builds(_application, texts, st.lists(payloads, max_size=3), st.booleans()),
    st.builds(activity_error, states),
    st.builds(lambda t: TimeoutError("t", type=t, last_heartbeat_details=[]), timeout_types),
    st.builds(CancelledError, texts),
    st.builds(RaisingCause, texts),
    st.builds(ForeignCause, texts),
    st.builds(RaisingText, texts),
    st.builds(ValueError, texts),
)


@SETTINGS
@given(st.lists(links, min_size=1, max_size=6), st.integers(min_value=-1, max_value=5))
def test_any_chain_of_forged_links_is_read_without_raising(
    chain: list[BaseException], back_to: int
) -> None:
    for outer, inner in itertools.pairwise(chain):
        with contextlib.suppress(AttributeError):  # a link whose __cause__ is a property
            outer.__cause__ = inner
    if 0 <= back_to < len(chain):  # a cycle: the last link's cause is an earlier one
        with contextlib.suppress(AttributeError):
            chain[-1].__cause__ = chain[back_to]
    detail = rt.read_error(chain[0])
    check(detail)
