"""ErrorDetail and RecoverableError: the value, its derived fields and its round trips."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import pickle
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

import recoverable as rc
from recoverable._core.detail import FIELDS, MAX_CAUSE_DEPTH

SRC = Path(rc.__file__).parent


def _detail(**fields: object) -> rc.ErrorDetail:
    return rc.ErrorDetail.create(**fields)  # type: ignore[arg-type]


def test_create_fills_every_field_from_the_table() -> None:
    detail = rc.ErrorDetail.create(
        "provider_rate_limited", "slow down", retry_after_ms=1500, status=429, source="openai"
    )
    assert detail.to_dict() == {
        "code": "provider_rate_limited",
        "message": "slow down",
        "category": "provider",
        "retryable": True,
        "retry_after_ms": 1500,
        "fix_required": None,
        "fix_command": None,
        "user_message": "The AI service is busy right now. Please try again in a moment.",
        "status": 429,
        "source": "openai",
        "cause": None,
        "details": {},
        "suggestion": None,
    }
    assert (detail.recovery, detail.http_status, detail.exit_code, detail.fallback) == (
        "retry",
        503,
        11,
        True,
    )


def test_fix_fields_only_when_not_retryable_and_retry_after_only_when_retryable() -> None:
    quota = rc.ErrorDetail.create("provider_quota_exceeded", "no credit", retry_after_ms=9000)
    assert quota.retryable is False
    assert quota.retry_after_ms is None
    assert quota.fix_required is not None
    assert quota.recovery == "fix"
    forced = rc.ErrorDetail.create("invalid_input", "x", retryable=True, fix_required="no")
    assert (forced.retryable, forced.fix_required, forced.fix_command) == (True, None, None)
    assert rc.ErrorDetail.create("unknown", "x").recovery == "stop"


def test_cli_not_found_gets_the_install_command_of_its_source() -> None:
    detail = rc.ErrorDetail.create("cli_not_found", "spawn codex ENOENT", source="codex")
    assert detail.fix_command == "npm install -g @openai/codex"
    assert detail.recovery == "fix"


@pytest.mark.parametrize("bad", [-5, float("nan"), "soon", True])  # inf: test_hostile_values
def test_garbage_retry_after_is_dropped(bad: object) -> None:
    assert rc.ErrorDetail.create("unavailable", "x", retry_after_ms=bad).retry_after_ms is None  # type: ignore[arg-type]


def test_create_refuses_a_code_this_process_has_not_registered() -> None:
    with pytest.raises(ValueError, match=r"code 'their_own_code' is not registered.*register_code"):
        rc.ErrorDetail.create("their_own_code", "from another process")
    with pytest.raises(ValueError, match="their_own_code"):
        rc.RecoverableError("their_own_code", "from another process")


def test_a_payloads_unregistered_code_reads_as_unknown_for_derived_fields() -> None:
    detail = rc.ErrorDetail.from_dict({"code": "their_own_code", "message": "from elsewhere"})
    assert detail.code == "their_own_code"
    assert detail.category == "unknown"
    assert (detail.http_status, detail.exit_code, detail.retryable) == (500, 1, False)


def test_json_round_trip_is_exact() -> None:
    cause = rc.ErrorDetail.create("network_error", "reset", details={"errno": 104})
    detail = rc.ErrorDetail.create(
        "provider_connection_lost",
        "dropped",
        source="anthropic",
        cause=cause,
        details={"request_id": "req_1", "nested": {"a": [1, 2.5, None]}},
    )
    text = json.dumps(detail.to_dict())
    again = rc.ErrorDetail.from_dict(json.loads(text))
    assert again == detail
    assert isinstance(again.cause, rc.ErrorDetail)
    assert again.cause.details == {"errno": 104}


def test_details_are_made_json_safe() -> None:
    detail = rc.ErrorDetail.create(
        "unknown", "x", details={"path": Path("/tmp/x"), "bad": float("nan"), 3: (1, 2)}
    )
    assert detail.details == {"path": "/tmp/x", "bad": "nan", "3": [1, 2]}
    json.dumps(detail.to_dict(), allow_nan=False)


def test_from_dict_keeps_unknown_keys_in_details() -> None:
    payload = {
        "code": "conflict",
        "message": "m",
        "retryable": False,
        "trace_id": "t1",
        "details": {"a": 1},
        "exit_code": 6,
    }
    detail = rc.ErrorDetail.from_dict(payload)
    assert detail.details == {"a": 1, "trace_id": "t1"}
    assert detail.user_message == rc.codes["conflict"].user_message
    assert detail.category == "caller"


@pytest.mark.parametrize(
    ("payload", "match"),
    [
        ([], "mapping"),
        ({"message": "m"}, "code"),
        ({"code": "x"}, "message"),
        ({"code": "x", "message": "m", "retryable": "yes"}, "retryable"),
        ({"code": "x", "message": "m", "status": "429"}, "status"),
        ({"code": "x", "message": "m", "details": []}, "details"),
        ({"code": "x", "message": "m", "cause": 5}, "cause"),
        ({"code": "x", "message": "m", "fix_command": 5}, "fix_command"),
    ],
)
def test_from_dict_rejects_bad_payloads_with_a_typed_error(payload: object, match: str) -> None:
    with pytest.raises(rc.PayloadError, match=match):
        rc.ErrorDetail.from_dict(payload)  # type: ignore[arg-type]


def _chain(length: int) -> rc.ErrorDetail:
    detail = rc.ErrorDetail.create("unknown", f"link {length - 1}")
    for index in range(length - 2, -1, -1):
        detail = rc.ErrorDetail.create("unknown", f"link {index}", cause=detail)
    return detail


def _depth(detail: rc.ErrorDetail) -> tuple[int, object]:
    depth, node = 1, detail.cause
    while isinstance(node, rc.ErrorDetail):
        depth, node = depth + 1, node.cause
    return depth, node


def test_cause_is_at_most_eight_deep_and_deeper_links_are_summarised() -> None:
    depth, tail = _depth(_chain(20))
    assert depth == MAX_CAUSE_DEPTH
    assert tail == "unknown: link 8"
    payload = _chain(20).to_dict()
    assert _depth(rc.ErrorDetail.from_dict(payload))[0] == MAX_CAUSE_DEPTH


def test_deep_payloads_are_summarised_and_cycles_cut() -> None:
    payload: dict[str, object] = {"code": "unknown", "message": "0"}
    node = payload
    for index in range(1, 30):
        child: dict[str, object] = {"code": "unknown", "message": str(index)}
        node["cause"] = child
        node = child
    depth, tail = _depth(rc.ErrorDetail.from_dict(payload))
    assert (depth, tail) == (MAX_CAUSE_DEPTH, "unknown: 8")
    loop: dict[str, object] = {"code": "conflict", "message": "a"}
    loop["cause"] = loop
    assert rc.ErrorDetail.from_dict(loop).cause == "<cycle>"


def test_the_detail_is_frozen_hashable_and_pickles() -> None:
    detail = rc.ErrorDetail.create("provider_overloaded", "busy", status=529)
    with pytest.raises(dataclasses.FrozenInstanceError):
        detail.code = "x"  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(detail)) == detail
    assert dataclasses.replace(detail, message="other").message == "other"
    assert [field.name for field in dataclasses.fields(detail)] == list(detail.to_dict())
    assert hash(detail) == hash(rc.ErrorDetail.create("provider_overloaded", "busy", status=529))


def test_a_classified_detail_is_the_same_frozen_value_as_a_constructed_one() -> None:
    # classify builds details through a fast path (`unvalidated`, filling a same-layout class
    # whose slots are `FIELDS`); the result must be a plain ErrorDetail in every respect.
    assert tuple(field.name for field in dataclasses.fields(rc.ErrorDetail)) == FIELDS
    detail = rc.classify(ConnectionRefusedError(111, "refused"))
    assert type(detail) is rc.ErrorDetail
    assert detail == rc.ErrorDetail.create("network_error", "[Errno 111] refused")
    assert hash(detail) == hash(rc.ErrorDetail.create("network_error", "[Errno 111] refused"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        detail.message = "changed"  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(detail)) == detail


def test_recoverable_error_carries_and_proxies_its_detail() -> None:
    err = rc.RecoverableError("provider_rate_limited", "slow", retry_after_ms=200, status=429)
    assert str(err) == "slow"
    assert err.args == ("slow", err.detail.to_dict())
    assert (err.code, err.retryable, err.retry_after_ms, err.status, err.http_status) == (
        "provider_rate_limited",
        True,
        200,
        429,
        503,
    )
    assert err.exit_code == 11
    assert err.recovery == "retry"
    assert err.fallback is True


def test_recoverable_error_reads_every_field_of_its_detail_through() -> None:
    err = rc.RecoverableError("provider_quota_exceeded", "no credit", source="openai")
    for name in (*FIELDS, "recovery", "http_status", "exit_code", "fallback"):
        assert getattr(err, name) == getattr(err.detail, name), name
    with pytest.raises(AttributeError):
        err.code = "other"  # type: ignore[misc]
    assert rc.RecoverableError("conflict").detail.message == rc.codes["conflict"].user_message


def test_recoverable_error_names_the_fields_of_a_detail_in_their_order() -> None:
    # `error.py` spells them out so that it loads without the detail's module (issue 27).
    from recoverable._core.error import READ_THROUGH

    assert (*FIELDS, "recovery", "http_status", "exit_code", "fallback") == READ_THROUGH


def test_recoverable_error_pickles_whole() -> None:
    cause = rc.ErrorDetail.create("network_error", "reset")
    err = rc.RecoverableError("provider_connection_lost", "lost", cause=cause, source="openai")
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is rc.RecoverableError
    assert again.detail == err.detail
    assert str(again) == "lost"


def test_recoverable_error_survives_a_celery_style_json_round_trip() -> None:
    err = rc.RecoverableError("provider_quota_exceeded", "no credit", status=429, source="openai")
    # Celery's JSON result backend stores exactly this and rebuilds with cls(*exc_message).
    stored = json.loads(
        json.dumps(
            {
                "exc_type": type(err).__qualname__,
                "exc_message": list(err.args),
                "exc_module": type(err).__module__,
            }
        )
    )
    module = importlib.import_module(stored["exc_module"])
    rebuilt = getattr(module, stored["exc_type"])(*stored["exc_message"])
    assert rebuilt.detail == err.detail
    assert rebuilt.args == err.args


def _second_copy(tmp_path: Path) -> ModuleType:
    """Load the package a second time under another name, as a second install would."""
    target = tmp_path / "recoverable_copy"
    shutil.copytree(SRC, target, ignore=shutil.ignore_patterns("__pycache__"))
    spec = importlib.util.spec_from_file_location(
        "recoverable_copy", target / "__init__.py", submodule_search_locations=[str(target)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["recoverable_copy"] = module
    spec.loader.exec_module(module)
    return module


def test_a_second_installed_copy_is_recognised_by_its_marker(tmp_path: Path) -> None:
    copy = _second_copy(tmp_path)
    try:
        foreign = copy.RecoverableError("provider_overloaded", "busy", status=529)
        assert not isinstance(foreign, rc.RecoverableError)
        detail = rc.classify(foreign)
        assert type(detail) is rc.ErrorDetail
        assert detail.to_dict() == foreign.detail.to_dict()
        assert rc.classify(foreign.detail).code == "provider_overloaded"
        # and the other way round
        assert copy.classify(rc.RecoverableError("conflict", "c")).code == "conflict"
    finally:
        for name in [name for name in sys.modules if name.startswith("recoverable_copy")]:
            del sys.modules[name]


def test_a_suggestion_comes_from_the_row_or_the_producer_scrubbed() -> None:
    rc.register_code(
        "my_quota_code",
        user_message="Out of quota.",
        suggestion="Ask the team lead to raise the monthly limit.",
    )
    try:
        assert rc.ErrorDetail.create("my_quota_code").suggestion == (
            "Ask the team lead to raise the monthly limit."
        )
        given = rc.ErrorDetail.create(
            "my_quota_code", suggestion="Rotate sk-proj-abcdefghijklmnopqrstuvwxyz0123"
        )
        assert given.suggestion == "Rotate sk-[REDACTED]"
        assert rc.ErrorDetail.create("my_quota_code", suggestion=None).suggestion is None
        assert rc.ErrorDetail.from_dict(given.to_dict()) == given
        assert rc.RecoverableError(given).suggestion == given.suggestion
    finally:
        rc.codes.unregister("my_quota_code")
    assert rc.ErrorDetail.create("unknown").suggestion is None
