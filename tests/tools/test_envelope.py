"""The agent-tool envelope (cli-agent-spec): writing it, the UPPER/lower code mapping, and the
spec's reading rules, one table row per malformed shape the spec names."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import recoverable as rc
from recoverable._core.codes import validate_fix_command
from recoverable._core.envelope import MAX_ENVELOPE_CHARS, Envelope, written
from recoverable._core.untrusted import MAX_HINT_MS

KEYS = ["ok", "data", "error", "warnings", "meta"]


@pytest.fixture
def custom_code() -> Iterator[str]:
    rc.register_code(
        "deploy_window_closed",
        exit_code=4,
        user_message="Deploys are paused right now.",
        fix_required="Wait for the deploy window",
    )
    yield "deploy_window_closed"
    rc.codes.unregister("deploy_window_closed")


# --- the code mapping ------------------------------------------------------------------------


@pytest.mark.parametrize("row", list(rc.codes), ids=lambda row: row.code)
def test_every_code_maps_to_upper_snake_and_back_exactly(row: rc.CodeRow) -> None:
    upper = rc.tools.to_envelope_code(row.code)
    assert upper == row.code.upper()
    assert upper.replace("_", "").isalnum() and upper.isupper()
    assert rc.tools.from_envelope_code(upper) == row.code


def test_a_custom_code_maps_both_ways(custom_code: str) -> None:
    assert rc.tools.to_envelope_code(custom_code) == "DEPLOY_WINDOW_CLOSED"
    assert rc.tools.from_envelope_code("DEPLOY_WINDOW_CLOSED") == custom_code
    # and a code registered only elsewhere (another tool's) too
    assert rc.tools.from_envelope_code("QUOTA_BUCKET_EMPTY") == "quota_bucket_empty"


@pytest.mark.parametrize(
    ("spelling", "code"),
    [
        ("TOKEN_EXPIRED", "credentials_expired"),
        ("AUTH_TOKEN_EXPIRED", "credentials_expired"),
        ("CREDENTIALS_EXPIRED", "credentials_expired"),
        ("TOKEN_MISSING", "unauthenticated"),
        ("TOKEN_INVALID", "unauthenticated"),
        ("AUTH_REQUIRED", "unauthenticated"),
        ("UNAUTHENTICATED", "unauthenticated"),
        ("VALIDATION_ERROR", "invalid_input"),
        ("ARG_ERROR", "invalid_input"),
        ("PRECONDITION", "precondition_failed"),
        ("GENERAL_ERROR", "unknown"),
        ("rate_limited", "rate_limited"),  # a lower_snake producer (Helix) reads the same
    ],
)
def test_the_specs_other_spellings_are_read_as_our_codes(spelling: str, code: str) -> None:
    assert rc.tools.from_envelope_code(spelling) == code
    envelope = rc.Envelope.parse(_failure({"code": spelling, "message": "m"}))
    assert envelope.error is not None and envelope.error.code == code
    if spelling.lower() != code:
        assert envelope.error.details["envelope_code"] == spelling


def test_a_registered_code_wins_over_an_alias() -> None:
    rc.register_code("token_expired", user_message="Your token has expired.")
    try:
        assert rc.tools.from_envelope_code("TOKEN_EXPIRED") == "token_expired"
        assert (
            rc.tools.from_envelope_code(rc.tools.to_envelope_code("token_expired"))
            == "token_expired"
        )
    finally:
        rc.codes.unregister("token_expired")


# --- writing ---------------------------------------------------------------------------------


def test_success_writes_all_five_keys() -> None:
    envelope = rc.Envelope.success({"n": 1}, duration_ms=12)
    assert envelope.to_dict() == {
        "ok": True, "data": {"n": 1}, "error": None, "warnings": [], "meta": {"duration_ms": 12},
    }  # fmt: skip
    assert list(json.loads(envelope.to_json())) == KEYS
    assert envelope.exit_code == 0


def test_success_with_no_data_writes_an_empty_object_not_null() -> None:
    # data and error both null would read as malformed
    assert rc.Envelope.success().to_dict()["data"] == {}
    assert rc.Envelope.parse(rc.Envelope.success().to_json()).ok


def test_failure_from_a_detail_writes_upper_snake_codes_down_the_cause_chain() -> None:
    inner = rc.ErrorDetail.create("network_error", "refused")
    detail = rc.ErrorDetail.create("provider_unreachable", "no route", cause=inner)
    error = rc.Envelope.failure(detail, duration_ms=3).to_dict()["error"]
    assert (error["code"], error["cause"]["code"]) == ("PROVIDER_UNREACHABLE", "NETWORK_ERROR")
    assert error["retryable"] is True
    assert error["retry_after_ms"] == 1000  # the reading rule, written out


def test_failure_from_an_exception_classifies_it() -> None:
    envelope = rc.Envelope.failure(ConnectionRefusedError(111, "Connection refused"))
    assert envelope.error is not None
    assert (envelope.error.code, envelope.ok, envelope.data) == ("network_error", False, None)
    assert envelope.exit_code == 12
    error = rc.Envelope.failure(rc.RecoverableError("conflict", "stale")).to_dict()["error"]
    assert (error["code"], error["message"], error["fix_required"]) == (
        "CONFLICT", "stale", "Reload the current state and reconcile",
    )  # fmt: skip


def test_failure_emits_the_suggestion_and_the_fix() -> None:
    detail = rc.ErrorDetail.create(
        "credentials_expired",
        "token expired at 2026-07-01T00:00:00Z",
        fix_command="tool auth refresh",
        suggestion="Your token lifetime is 1h; consider a service account",
    )
    error = rc.Envelope.failure(detail).to_dict()["error"]
    assert error["suggestion"] == "Your token lifetime is 1h; consider a service account"
    assert (error["fix_required"], error["fix_command"]) == (
        "Refresh the credentials", "tool auth refresh",
    )  # fmt: skip
    assert rc.Envelope.failure(detail).exit_code == 8


def test_a_hint_is_kept_and_a_non_retryable_error_gets_no_wait() -> None:
    hinted = rc.ErrorDetail.create("rate_limited", "slow", retry_after_ms=2500)
    assert rc.Envelope.failure(hinted).to_dict()["error"]["retry_after_ms"] == 2500
    stop = rc.ErrorDetail.create("not_found", "gone")
    assert rc.Envelope.failure(stop).to_dict()["error"]["retry_after_ms"] is None


def test_an_envelope_cannot_be_both() -> None:
    detail = rc.ErrorDetail.create("not_found", "gone")
    with pytest.raises(ValueError, match="no error"):
        rc.Envelope(True, {}, detail)
    with pytest.raises(ValueError, match="an error and no data"):
        rc.Envelope(False, {"x": 1}, detail)
    with pytest.raises(ValueError, match="an error and no data"):
        rc.Envelope(False)


def test_warnings_take_text_objects_and_details() -> None:
    warning = rc.ErrorDetail.create("cli_not_authenticated", "codex: not logged in")
    envelope = rc.Envelope.success({}, warnings=["slow disk", {"k": 1}, warning])
    written = envelope.to_dict()["warnings"]
    assert written[:2] == ["slow disk", {"k": 1}]
    assert written[2]["code"] == "CLI_NOT_AUTHENTICATED"


def test_duration_is_a_whole_number_of_ms() -> None:
    assert rc.Envelope.success({}, duration_ms=12.6).duration_ms == 13  # type: ignore[arg-type]
    for bad in (-1, float("nan"), "5", True):
        assert rc.Envelope.success({}, duration_ms=bad).duration_ms == 0  # type: ignore[arg-type]


def test_a_result_json_cannot_hold_is_refused_not_written_as_nan() -> None:
    answer = json.loads(rc.Envelope.success({"x": float("nan")}).to_json())
    assert (answer["ok"], answer["data"], answer["error"]["code"]) == (
        False, None, "TOOL_OUTPUT_INVALID"
    )  # fmt: skip
    assert json.loads(rc.Envelope.success({"when": object}).to_json())["data"]["when"]


@pytest.mark.parametrize("row", list(rc.codes), ids=lambda row: row.code)
def test_a_failure_round_trips_through_json_exactly(row: rc.CodeRow) -> None:
    detail = rc.ErrorDetail.create(row.code, "m", source="x", details={"k": [1, "two"]})
    envelope = rc.Envelope.failure(detail, warnings=["w"], duration_ms=7, meta={"request_id": "r"})
    assert rc.Envelope.parse(envelope.to_json()) == envelope
    assert rc.Envelope.parse(envelope.to_json(), exit_code=envelope.exit_code) == _with_exit(
        envelope
    )


def test_a_custom_codes_failure_round_trips_exactly(custom_code: str) -> None:
    envelope = rc.Envelope.failure(rc.ErrorDetail.create(custom_code, "closed until 14:00"))
    assert json.loads(envelope.to_json())["error"]["code"] == "DEPLOY_WINDOW_CLOSED"
    assert rc.Envelope.parse(envelope.to_json()) == envelope
    assert envelope.exit_code == 4


def test_a_success_round_trips_exactly() -> None:
    envelope = rc.Envelope.success([1, {"a": None}], warnings=[{"w": 1}], duration_ms=5)
    assert rc.Envelope.parse(envelope.to_json()) == envelope
    assert rc.Envelope.parse(envelope.to_json(), exit_code=0) == envelope


def _with_exit(envelope: rc.Envelope) -> rc.Envelope:
    assert envelope.error is not None
    details = {**envelope.error.details, "exit_code": envelope.exit_code}
    error = rc.ErrorDetail.from_dict({**envelope.error.to_dict(), "details": details})
    return rc.Envelope(False, None, error, envelope.warnings, envelope.meta)


# --- the reading rules -----------------------------------------------------------------------


def _failure(error: object, **top: Any) -> dict[str, Any]:
    return {"ok": False, "data": None, "error": error, "warnings": [], "meta": {}, **top}


RATE = {"code": "RATE_LIMITED", "message": "slow down", "retryable": True}

MALFORMED = [
    ("empty text", "", "not JSON"),
    ("not JSON", "Error: something broke", "not JSON"),
    ("a list", "[1, 2]", "not a JSON object"),
    ("null", "null", "not a JSON object"),
    ("NaN", '{"ok": false, "error": {"code": "X", "message": NaN}}', "not JSON"),
    ("Infinity", '{"ok": true, "error": null, "data": -Infinity}', "not JSON"),
    ("a byte order mark first", '\ufeff{"ok": true, "error": null, "data": 1}', "not JSON"),
    ("trailing garbage", '{"ok": true, "error": null, "data": 1} x', "not JSON"),
    ("a float too large", '{"ok": true, "error": null, "data": 1e400}', "not JSON"),
    ("nested past the parser", '{"a":' * 100_000, "nested too deep"),
    ("no error key", {"ok": False, "data": None, "warnings": [], "meta": {}}, "no error key"),
    ("no error key on a success", {"ok": True, "data": {"x": 1}}, "no error key"),
    ("both null", {"ok": True, "data": None, "error": None}, "data and error are both null"),
    ("both null, ok false", _failure(None), "data and error are both null"),
    ("both null, no ok", {"data": None, "error": None}, "data and error are both null"),
    ("data, no error", _failure(None, data={"x": 1}), "a failure with a null error"),
    ("error is text", _failure("it broke"), "error is not an object"),
    ("error is a list", _failure([RATE]), "error is not an object"),
    ("code is a number", _failure({"code": 5, "message": "m"}), "not a payload"),
    ("code with a dash", _failure({"code": "RATE-LIMITED", "message": "m"}), "not a payload"),
    ("no message", _failure({"code": "RATE_LIMITED"}), "not a payload"),
    ("retryable is text", _failure({**RATE, "retryable": "yes"}), "not a payload"),
    ("details is a list", _failure({**RATE, "details": [1]}), "not a payload"),
    ("a parsed non-object", 42, "not text or an object"),
]  # fmt: skip


@pytest.mark.parametrize(("shape", "value", "why"), MALFORMED, ids=[row[0] for row in MALFORMED])
def test_a_malformed_envelope_is_a_general_error_never_retried(
    shape: str, value: object, why: str
) -> None:
    envelope = rc.Envelope.parse(value)
    assert (envelope.ok, envelope.data) == (False, None)
    assert envelope.error is not None
    assert (envelope.error.code, envelope.error.retryable) == ("tool_output_invalid", False)
    assert why in envelope.error.details["malformed"]
    assert envelope.exit_code == 1  # GENERAL_ERROR
    assert rc.next_action(envelope.error).kind == "stop"


def test_an_envelope_over_the_size_cap_is_malformed_unread() -> None:
    text = '{"ok": true, "error": null, "data": "' + "x" * MAX_ENVELOPE_CHARS + '"}'
    error = rc.Envelope.parse(text).error
    assert error is not None and "over" in error.details["malformed"]


def test_not_modified_is_the_one_success_without_data() -> None:
    envelope = rc.Envelope.parse(
        {"ok": True, "data": None, "error": None, "meta": {"not_modified": True}}
    )
    assert (envelope.ok, envelope.data, envelope.error) == (True, None, None)


@pytest.mark.parametrize(
    ("value", "exit_code", "ok", "code"),
    [
        # the exit code beats ok, both ways
        ({"ok": True, "data": {"x": 1}, "error": None}, 7, False, "permission_denied"),
        ({"ok": True, "data": {"x": 1}, "error": None}, 11, False, "rate_limited"),
        ({"ok": True, "data": {"x": 1}, "error": None}, 12, False, "unavailable"),
        ({"ok": True, "data": {"x": 1}, "error": None}, 3, False, "unknown"),  # no code of ours
        (_failure(None, data={"x": 1}), 8, False, "unauthenticated"),
        (_failure({"code": "CONFLICT", "message": "stale"}), 6, False, "conflict"),
        (_failure({"code": "CONFLICT", "message": "stale"}), 0, True, None),
        ({"ok": False, "data": {"x": 1}, "error": None}, 0, True, None),
        # without an exit code, ok decides; without ok, whether there is an error
        (_failure({"code": "CONFLICT", "message": "stale"}), None, False, "conflict"),
        ({"data": {"x": 1}, "error": None}, None, True, None),
        ({"data": None, "error": {"code": "CONFLICT", "message": "m"}}, None, False, "conflict"),
    ],
)
def test_the_exit_code_beats_ok(
    value: dict[str, Any], exit_code: int | None, ok: bool, code: str | None
) -> None:
    envelope = rc.Envelope.parse(value, exit_code=exit_code)
    assert envelope.ok is ok
    assert (envelope.error.code if envelope.error else None) == code
    if exit_code and envelope.error is not None:
        assert envelope.error.details["exit_code"] == exit_code


def test_a_success_that_also_carries_an_error_keeps_it_as_a_warning() -> None:
    envelope = rc.Envelope.parse(_failure(RATE, data={"x": 1}), exit_code=0)
    assert (envelope.ok, envelope.data, envelope.error) == (True, {"x": 1}, None)
    (warning,) = envelope.warnings
    assert warning["ignored_error"]["code"] == "RATE_LIMITED"


@pytest.mark.parametrize(
    ("hint", "expected"),
    [
        (None, 1000),  # retryable without a wait means 1 s
        (2500, 2500),
        (0, 0),
        (-5, 1000),
        ("soon", 1000),
        (10**30, MAX_HINT_MS),
    ],
)
def test_a_retryable_errors_wait(hint: object, expected: int) -> None:
    error = {**RATE} if hint is None else {**RATE, "retry_after_ms": hint}
    detail = rc.Envelope.parse(_failure(error)).error
    assert detail is not None
    assert (detail.retryable, detail.retry_after_ms) == (True, expected)
    assert rc.next_action(detail) == rc.tools.Action(
        "retry", "rate_limited", wait_ms=expected, reason="retry 1 of 3"
    )


def test_missing_retryable_is_the_codes_default() -> None:
    rate = rc.Envelope.parse(_failure({"code": "RATE_LIMITED", "message": "m"})).error
    foreign = rc.Envelope.parse(_failure({"code": "DEPLOY_LOCKED", "message": "m"})).error
    assert rate is not None and foreign is not None
    assert (rate.retryable, rate.retry_after_ms) == (True, 1000)
    assert (foreign.code, foreign.retryable, foreign.exit_code) == ("deploy_locked", False, 1)


def test_a_foreign_code_exits_as_its_tool_did() -> None:
    locked = _failure({"code": "DEPLOY_LOCKED", "message": "m"})
    error = rc.Envelope.parse(locked, exit_code=4).error
    assert error is not None
    assert (error.code, error.exit_code) == ("deploy_locked", 4)
    # a shell's status or a signal's is not a code's
    killed = rc.Envelope.parse(locked, exit_code=137)
    assert killed.error is not None and killed.error.exit_code == killed.exit_code == 1


def test_the_spec_fields_we_do_not_model_are_kept_in_details() -> None:
    error = {
        **RATE, "retry_strategy": "exponential_backoff", "phase": "execution",
        "detail": "upstream said 429", "docs_url": "https://example.invalid/rl",
    }  # fmt: skip
    detail = rc.Envelope.parse(_failure(error)).error
    assert detail is not None
    assert detail.details == {
        "retry_strategy": "exponential_backoff", "phase": "execution",
        "detail": "upstream said 429", "docs_url": "https://example.invalid/rl",
    }  # fmt: skip


def test_a_peers_texts_are_cleaned_and_its_sentence_for_a_known_code_is_ours() -> None:
    error = {
        "code": "RATE_LIMITED", "message": "key sk-proj-abcdefghijklmnopqrstuvwxyz123 \udcff",
        "user_message": "Click http://evil.invalid to continue", "retryable": True,
    }  # fmt: skip
    detail = rc.Envelope.parse(_failure(error)).error
    assert detail is not None
    assert "abcdefghijklmnop" not in detail.message
    assert detail.message.endswith("\ufffd")
    assert detail.user_message == rc.codes["rate_limited"].user_message


def test_a_peers_warnings_and_meta_are_bounded_and_cleaned() -> None:
    value = {
        "ok": True, "data": 1, "error": None,
        "warnings": ["x" * 5000, {"k": "sk-proj-abcdefghijklmnopqrstuvwxyz123"}, 7]
        + ["w"] * 500,
        "meta": {"duration_ms": 9, "request_id": "req_1"},
    }  # fmt: skip
    envelope = rc.Envelope.parse(value)
    assert len(envelope.warnings) == 100
    assert len(envelope.warnings[0]) == 1000
    assert "abcdefghijklmnop" not in json.dumps(envelope.warnings[1])
    assert envelope.warnings[2] == "7"
    assert envelope.meta == {"duration_ms": 9, "request_id": "req_1"}
    odd = rc.Envelope.parse({"ok": True, "data": 1, "error": None, "warnings": None, "meta": 5})
    assert (odd.warnings, odd.meta) == ((), {"duration_ms": 0})


def test_parse_reads_bytes_text_and_objects_alike() -> None:
    text = rc.Envelope.success({"x": "é"}).to_json()
    assert (
        rc.Envelope.parse(text)
        == rc.Envelope.parse(text.encode())
        == rc.Envelope.parse(json.loads(text))
    )
    broken = rc.Envelope.parse(b'{"ok": true, "error": null, "data": "\xff"}')
    assert broken.data == "\ufffd"


# --- the spec's specialised commands --------------------------------------------------------

LOGIN = "python relay.py login"  # a payload's own command: shown, never what runs


@pytest.mark.parametrize(
    ("error", "fix_command", "suggested"),
    [
        # a credential code whose registry row holds a fix for the source: that fix
        ({"code": "CLI_NOT_AUTHENTICATED", "source": "claude", "reauth_command": LOGIN},
         "claude auth login", None),
        ({"code": "CLI_NOT_AUTHENTICATED", "source": "codex", "fix_command": LOGIN},
         "codex login", LOGIN),
        ({"code": "CLI_NOT_AUTHENTICATED", "source": "codex", "refresh_command": "rm -rf ~"},
         "codex login", None),  # dropped by the validator: still asks for a login
        ({"code": "CLI_NOT_AUTHENTICATED", "source": "claude", "fix_command": "claude auth login"},
         "claude auth login", None),
        # no fix registered for the source, or for the code: the detail as read
        ({"code": "CLI_NOT_AUTHENTICATED", "source": "gemini", "reauth_command": LOGIN},
         None, None),
        ({"code": "CLI_NOT_AUTHENTICATED", "reauth_command": LOGIN, "fix_command": LOGIN},
         LOGIN, None),
        ({"code": "TOKEN_EXPIRED", "refresh_command": LOGIN, "fix_command": LOGIN}, LOGIN, None),
        # a code that is not a credential code: never replaced, even with a registered fix
        ({"code": "CLI_NOT_FOUND", "source": "codex", "fix_command": LOGIN}, LOGIN, None),
        # a credential code that says nothing to run: nothing is added
        ({"code": "CLI_NOT_AUTHENTICATED", "source": "claude"}, None, None),
    ],
)  # fmt: skip
def test_a_credential_codes_command_is_the_registered_fix_when_there_is_one(
    error: dict[str, Any], fix_command: str | None, suggested: str | None
) -> None:
    read = rc.Envelope.parse(_failure({"message": "m", "fix_required": "Log in", **error}))
    assert read.error is not None
    assert (read.error.fix_command, read.error.details.get("suggested_command")) == (
        fix_command, suggested,
    )  # fmt: skip
    for name in ("refresh_command", "reauth_command"):  # kept as read, for a person
        if name in error and name + "_dropped" not in read.error.details:
            assert read.error.details[name] == error[name]
    action = rc.next_action(read.error)
    registered = rc.codes[read.error.code].fix_commands.values()
    assert (action.kind == "run_fix") is (fix_command in registered)


# --- properties: whatever a peer prints ------------------------------------------------------

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
commands = st.sampled_from(
    ["pip install x; rm -rf ~", "tool auth refresh", "rm -rf build", "echo $HOME", "", None, 5,
     "claude auth login", "codex login", "npm install -g @openai/codex"]
)  # fmt: skip
errors = st.fixed_dictionaries(
    {},
    optional={
        "code": st.sampled_from(
            [
                "RATE_LIMITED",
                "TOKEN_EXPIRED",
                "x",
                "Bad-Code",
                "",
                "MY_CODE",
                "CLI_NOT_AUTHENTICATED",
                "CLI_NOT_FOUND",
                "UNAUTHENTICATED",
            ]
        )
        | json_values,
        "source": st.sampled_from(["claude", "codex", "gemini"]) | json_values,
        "message": st.text(max_size=30) | json_values,
        "retryable": st.booleans() | json_values,
        "retry_after_ms": st.integers() | st.floats() | json_values,
        "fix_required": st.text(max_size=20) | st.none(),
        "fix_command": commands,
        "refresh_command": commands,
        "reauth_command": commands,
        "redirect": st.fixed_dictionaries({"command": commands}),
        "cause": json_values,
        "details": json_values,
    },
)
envelopes = st.fixed_dictionaries(
    {},
    optional={
        "ok": json_values, "data": json_values, "error": errors | json_values,
        "warnings": json_values, "meta": json_values,
    },
)  # fmt: skip


def _safe(envelope: rc.Envelope) -> None:
    assert isinstance(envelope, rc.Envelope)
    assert envelope.ok is (envelope.error is None)
    json.dumps(envelope.to_dict(), allow_nan=False)
    if envelope.error is not None:
        error = envelope.error
        assert error.fix_command is None or validate_fix_command(error.fix_command)
        for name in ("refresh_command", "reauth_command"):
            command = error.details.get(name)
            assert command is None or validate_fix_command(command)
        redirect = error.details.get("redirect")
        if isinstance(redirect, dict) and "command" in redirect:
            validate_fix_command(redirect["command"])
        assert not (error.retryable and error.fix_command)
        assert envelope.exit_code == error.exit_code >= 1
        # whatever it said, the ladder runs only what this registry holds for the code
        action = rc.next_action(error)
        row = rc.codes.get(error.code)
        if action.kind == "run_fix":
            assert row is not None and action.command in row.fix_commands.values()


@SETTINGS
@given(envelopes, st.none() | st.integers(min_value=-70, max_value=300))
def test_parse_never_raises_and_never_yields_an_unsafe_fix(value: Any, exit_code: Any) -> None:
    _safe(rc.Envelope.parse(value, exit_code=exit_code))
    _safe(rc.Envelope.parse(json.dumps(value), exit_code=exit_code))


@SETTINGS
@given(st.text(max_size=200) | st.binary(max_size=200))
def test_parse_reads_any_text_or_bytes(value: str | bytes) -> None:
    _safe(rc.Envelope.parse(value))


# -- the writer never raises: what JSON cannot write answers as a typed failure ---------------


def _deep() -> list[object]:
    nested: list[object] = []
    for _ in range(100_000):
        nested = [nested]
    return nested


def _cycle() -> list[object]:
    loop: list[object] = []
    loop.append(loop)
    return loop


UNWRITABLE = {
    "NaN data": lambda: Envelope.success(float("nan")),
    "infinity in meta": lambda: Envelope.success(1, meta={"ratio": float("inf")}),
    "a tuple key": lambda: Envelope.success({(1, 2): "x"}),
    "nesting past the recursion limit": lambda: Envelope.success(_deep()),
    "a cycle": lambda: Envelope.success(_cycle()),
    "an integer past 4300 digits": lambda: Envelope.success(10**5000),
    "NaN in a warning": lambda: Envelope.success(1, warnings=[{"x": float("nan")}]),
}


@pytest.mark.parametrize("build", UNWRITABLE.values(), ids=UNWRITABLE.keys())
def test_an_envelope_json_cannot_write_is_written_as_a_typed_failure(build: Any) -> None:
    envelope = build()
    text, answered = written(envelope, None)
    assert json.loads(text) == json.loads(envelope.to_json())
    assert answered.exit_code == 1
    assert answered.error is not None
    assert (answered.error.code, answered.error.retryable) == ("tool_output_invalid", False)
    parsed = Envelope.parse(text)
    assert parsed.error is not None
    assert parsed.error.code == "tool_output_invalid"


@settings(max_examples=200, deadline=None)
@given(
    data=st.recursive(
        st.none() | st.booleans() | st.floats() | st.integers() | st.text(),
        lambda inner: st.lists(inner) | st.dictionaries(st.text() | st.integers(), inner),
        max_leaves=30,
    )
)
def test_any_data_is_written_as_json_an_envelope_reads(data: object) -> None:
    text, answered = written(Envelope.success(data))
    assert Envelope.parse(text).ok is answered.ok
