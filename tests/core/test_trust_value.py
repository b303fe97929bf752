"""Trust at the level of the value (issue 22, part 2): every door into a detail applies the
same rules, a person reads only this process's sentences, keys are scrubbed and capped like
values, and the library's own log records, spans and metrics never carry a credential.

The doors: `ErrorDetail.create`, `ErrorDetail(...)` and `dataclasses.replace`, `copy_with`,
`RecoverableError(code, ...)`, `RecoverableError(detail, **changes)`, `from_dict` (and
`RecoverableError(message, payload)`, pickle). Table tests for each rule, then hypothesis
over any field values and any JSON (hostile keys, cycles, deep nesting).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import logging
import math
import pickle
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import recoverable as rc
from recoverable._core.categories import CATEGORY_SENTENCES, category_sentence
from recoverable._core.codes import validate_fix_command
from recoverable._core.detail import copy_with
from recoverable._core.failures import FailureEvent, report
from recoverable._core.secrets import REDACTED
from recoverable._core.untrusted import MAX_HINT_MS, MAX_MESSAGE_CHARS, MAX_NODES, json_safe_dict
from recoverable.integrations import otel

from ..support.telemetry import Telemetry
from .test_detail_properties import SETTINGS, json_like, texts
from .test_secrets import CREDENTIALS

SECRETS = [secret for _, secret in CREDENTIALS]
HOSTILE = [text for text, _ in CREDENTIALS]  # each a text the scrubber must clean
HTML = "<script>alert(1)</script>"

RATE = rc.ErrorDetail.create("provider_rate_limited", "slow down", retry_after_ms=500)
QUOTA = rc.ErrorDetail.create("provider_quota_exceeded", "no credit", source="openai")
AUTH = rc.ErrorDetail.create("cli_not_authenticated", "log in", source="claude")


def _shown(value: object) -> str:
    """Everything a value writes out: its JSON (a detail's whole chain), repr and str."""
    if isinstance(value, rc.RecoverableError):
        return "\n".join([str(value), repr(value), repr(value.args), _shown(value.detail)])
    if isinstance(value, rc.ErrorDetail):
        return "\n".join([json.dumps(value.to_dict()), repr(value), str(value)])
    return json.dumps(value)


def _no_secret(value: object, given: object = None) -> None:
    """No credential of the corpus in what `value` writes out. `given`: the inputs a property
    test drew; a secret that stands in them bare (hypothesis draws the literals it finds in
    the source, fragments of the corpus among them) is no credential any scrubber could know,
    and is not looked for."""
    shown = _shown(value)
    drawn = repr(given) if given is not None else ""
    for hostile in HOSTILE:
        drawn = drawn.replace(hostile, "")
    for secret in SECRETS:
        assert secret not in shown or secret in drawn


def _keys(value: object) -> Iterator[object]:
    """Every key at every level of a JSON-like value."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            yield from node
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def assert_trusted(detail: rc.ErrorDetail, given: object = None) -> None:
    """The invariants every door keeps, on each link of the chain (`given`: see
    `_no_secret`)."""
    node: object = detail
    while isinstance(node, rc.ErrorDetail):
        _assert_link(node)
        node = node.cause
    assert node is None or (isinstance(node, str) and len(node) <= MAX_MESSAGE_CHARS)
    text = json.dumps(detail.to_dict(), allow_nan=False)
    text.encode("utf-8")
    _no_secret(detail, given)


def _assert_link(detail: rc.ErrorDetail) -> None:
    assert type(detail) is rc.ErrorDetail
    row = rc.codes.get(detail.code)
    if row is not None:
        assert (detail.category, detail.user_message) == (row.category, row.user_message)
    else:  # a code registered elsewhere: a category this process knows, and its sentence
        assert detail.category in {*CATEGORY_SENTENCES, "unknown"}
        assert detail.user_message == category_sentence(detail.category)
    assert type(detail.retryable) is bool
    wait = detail.retry_after_ms
    assert wait is None or (detail.retryable and type(wait) is int and 0 <= wait <= MAX_HINT_MS)
    if detail.fix_command is not None:
        assert not detail.retryable
        validate_fix_command(detail.fix_command)
    assert detail.fix_required is None or not detail.retryable
    assert detail.status is None or (type(detail.status) is int and 100 <= detail.status <= 999)
    assert len(detail.message) <= MAX_MESSAGE_CHARS
    assert detail.source is None or len(detail.source) <= 100
    for key in _keys(detail.details):
        assert type(key) is str and len(key) <= MAX_MESSAGE_CHARS


# --- RecoverableError(detail, **changes) and copy_with: create's rules --------------------------

# (field, value given, the value kept): what each rule makes of a hostile value.
CLEANED = [
    ("retry_after_ms", math.nan, None),
    ("retry_after_ms", math.inf, MAX_HINT_MS),
    ("retry_after_ms", -1, None),
    ("retry_after_ms", 10**400, MAX_HINT_MS),
    ("retry_after_ms", 1.5, 2),
    ("retry_after_ms", True, None),
    ("retry_after_ms", "500", None),
    ("status", 99_999, None),
    ("status", True, None),
    ("status", 429, 429),
    ("message", "key sk-proj-" + "a" * 30 + " bad", "key sk-[REDACTED] bad"),
    ("message", "x" * 100_000, "x" * (MAX_MESSAGE_CHARS - 3) + "..."),
    ("source", "sk-proj-" + "b" * 30, "sk-[REDACTED]"),
    ("source", "s" * 1000, "s" * 97 + "..."),
    ("cause", "api_key=plainsecret123", "api_key=[REDACTED]"),
    ("details", {"sk-proj-" + "c" * 30: 1}, {"sk-[REDACTED]": 1}),
    ("details", {"password": "hunter2"}, {"password": REDACTED}),
    ("details", None, {}),
]  # fmt: skip


@pytest.mark.parametrize(("name", "given", "kept"), CLEANED)
def test_a_change_is_cleaned_as_create_cleans_it(name: str, given: Any, kept: Any) -> None:
    base = RATE if name == "retry_after_ms" else QUOTA
    for changed in (
        rc.RecoverableError(base, **{name: given}).detail,
        copy_with(base, **{name: given}),
        dataclasses.replace(base, **{name: given}),
    ):
        assert getattr(changed, name) == kept
        assert_trusted(changed)
    if name != "retry_after_ms":
        created = rc.ErrorDetail.create(base.code, **{name: given})
        assert getattr(created, name) == kept


@pytest.mark.parametrize("command", ["rm -rf ~", "python -c 'import os'", "echo $HOME", "a; b"])
def test_a_changed_fix_command_is_validated_at_every_door(command: str) -> None:
    for base in (QUOTA, RATE):  # validated even on a retryable detail, which then drops it
        with pytest.raises(rc.tools.FixCommandRejected):
            rc.RecoverableError(base, fix_command=command)
        with pytest.raises(rc.tools.FixCommandRejected):
            copy_with(base, fix_command=command)
        with pytest.raises(rc.tools.FixCommandRejected):
            rc.ErrorDetail.create(base.code, fix_command=command)
    with pytest.raises(rc.tools.FixCommandRejected):
        dataclasses.replace(QUOTA, fix_command=command)


def test_a_safe_changed_fix_command_is_kept_and_a_retryable_detail_keeps_none() -> None:
    assert rc.RecoverableError(QUOTA, fix_command="openai login").fix_command == "openai login"
    assert rc.RecoverableError(RATE, fix_command="openai login").fix_command is None
    flipped = rc.RecoverableError(AUTH, retryable=True).detail
    assert (flipped.fix_required, flipped.fix_command) == (None, None)
    assert rc.RecoverableError(RATE, retryable=False).retry_after_ms is None


@pytest.mark.parametrize(
    ("name", "value"),
    [("user_message", HTML), ("user_message", CATEGORY_SENTENCES["billing"]),
     ("category", "evil"), ("category", "billing")],
)  # fmt: skip
def test_the_tables_fields_take_only_the_registrys_words(name: str, value: str) -> None:
    for door in (
        lambda: rc.RecoverableError(RATE, **{name: value}),
        lambda: copy_with(RATE, **{name: value}),
        lambda: dataclasses.replace(RATE, **{name: value}),
    ):
        with pytest.raises(ValueError, match=f"^{name} is"):
            door()
    with pytest.raises(TypeError, match=f"^{name} is"):  # create takes neither
        rc.RecoverableError("provider_rate_limited", "m", **{name: value})


def test_a_copy_keeps_its_code() -> None:
    with pytest.raises(TypeError, match=r"^a copy keeps its code"):
        copy_with(RATE, code="provider_overloaded")
    with pytest.raises(TypeError):  # Python's own: the argument is taken
        rc.RecoverableError(RATE, code="provider_overloaded")  # type: ignore[misc]


def test_the_registrys_own_words_are_accepted_by_a_copy() -> None:
    assert copy_with(RATE, user_message=RATE.user_message, category="provider") == RATE
    foreign = rc.ErrorDetail.from_dict({"code": "peer_code", "message": "m"})
    moved = copy_with(foreign, category="billing")  # one of our categories: its sentence
    assert (moved.category, moved.user_message) == ("billing", CATEGORY_SENTENCES["billing"])
    with pytest.raises(ValueError, match=r"^user_message is"):
        copy_with(foreign, category="billing", user_message=RATE.user_message)
    with pytest.raises(ValueError, match=r"^category is"):
        copy_with(foreign, category="internal")  # a row's category, not one with a sentence


@pytest.mark.parametrize(
    ("name", "value"),
    [("retryable", "yes"), ("retryable", 1), ("message", 5), ("source", ["x"]),
     ("details", ["x"]), ("fix_required", 3), ("recovery", "retry"), ("no_such_field", 1)],
)  # fmt: skip
def test_a_change_of_the_wrong_type_is_a_type_error(name: str, value: object) -> None:
    with pytest.raises(TypeError):
        rc.RecoverableError(QUOTA, **{name: value})
    with pytest.raises(TypeError):
        copy_with(QUOTA, **{name: value})


def test_a_message_given_with_a_detail_is_a_change_not_ignored() -> None:
    error = rc.RecoverableError(QUOTA, "token=ephemeral-token-value again")
    assert error.detail.message == "token=[REDACTED] again"
    assert error.code == QUOTA.code


def test_the_detail_built_by_hand_obeys_the_same_rules() -> None:
    detail = rc.ErrorDetail(
        "provider_rate_limited", "sk-proj-" + "d" * 30, "provider", True,
        retry_after_ms=math.nan, fix_command="openai login", details={"x-api-key": "abc"},
    )  # fmt: skip
    assert detail.message == "sk-[REDACTED]"
    assert (detail.retry_after_ms, detail.fix_command) == (None, None)  # retryable: no fix
    assert detail.user_message == rc.codes["provider_rate_limited"].user_message  # the row's
    assert detail.details == {"x-api-key": REDACTED}
    with pytest.raises(ValueError, match="category"):
        rc.ErrorDetail("provider_rate_limited", "m", "evil", True)
    with pytest.raises(ValueError, match="user_message"):
        rc.ErrorDetail("provider_rate_limited", "m", "provider", True, user_message=HTML)
    with pytest.raises(ValueError, match="not registered"):
        rc.ErrorDetail("made_up_code", "m", "unknown", False)
    with pytest.raises(rc.tools.FixCommandRejected):
        rc.ErrorDetail("precondition_failed", "m", "caller", False, fix_command="rm -rf ~")


# --- a NaN wait no longer reaches the retry loops ---------------------------------------------


def _raises(error: BaseException) -> Callable[[], None]:
    def call() -> None:
        raise error

    return call


@pytest.mark.parametrize("wait", [math.nan, math.inf, -math.inf, -5.0])
def test_a_hostile_wait_given_with_a_detail_never_makes_retry_or_recover_raise(
    wait: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    slept: list[float] = []
    monkeypatch.setattr(time, "sleep", slept.append)  # recover sleeps with time.sleep
    error = rc.RecoverableError(RATE, retry_after_ms=wait)
    assert error.retry_after_ms in (None, MAX_HINT_MS)
    with pytest.raises(rc.RecoverableError) as given_up:
        rc.retry(attempts=2, sleep=slept.append).call(_raises(error))
    assert given_up.value.code == "provider_rate_limited"
    recovery = rc.tools.recover(_raises(error), retries=2)
    assert recovery.ok is False and recovery.error is not None
    assert all(math.isfinite(seconds) and seconds >= 0 for seconds in slept)
    action = rc.next_action(error.detail)
    assert action.wait_ms is None or 0 <= action.wait_ms <= MAX_HINT_MS


# --- a code must be registered to be created; a payload's is read with its category's sentence --


@pytest.mark.parametrize("code", ["their_own_code", "provider_rate_limitd", "", "X", "a b"])
def test_create_and_the_exception_refuse_an_unregistered_code(code: str) -> None:
    with pytest.raises(ValueError, match=r"not registered.*register_code"):
        rc.ErrorDetail.create(code)
    with pytest.raises(ValueError, match="not registered"):
        rc.RecoverableError(code, "m")


def test_a_code_registered_later_is_accepted_then() -> None:
    rc.register_code("trust_value_code", category="billing", user_message="Pay up.")
    try:
        assert rc.ErrorDetail.create("trust_value_code").user_message == "Pay up."
    finally:
        rc.codes.unregister("trust_value_code")
    with pytest.raises(ValueError, match="trust_value_code"):
        rc.ErrorDetail.create("trust_value_code")


@pytest.mark.parametrize(
    ("category", "kept", "sentence"),
    [
        ("billing", "billing", CATEGORY_SENTENCES["billing"]),
        ("network", "network", CATEGORY_SENTENCES["network"]),
        ("internal", "unknown", rc.codes["unknown"].user_message),  # a row's, no sentence
        ("evil", "unknown", rc.codes["unknown"].user_message),
        (HTML, "unknown", rc.codes["unknown"].user_message),
        (None, "unknown", rc.codes["unknown"].user_message),
    ],
)
def test_a_foreign_code_reads_its_categorys_sentence_never_its_own(
    category: str | None, kept: str, sentence: str
) -> None:
    payload = {
        "code": "peer_card_declined",
        "message": "m",
        "category": category,
        "user_message": f"{HTML} Click http://evil.example, key sk-proj-{'e' * 30}",
    }
    detail = rc.ErrorDetail.from_dict(payload)
    assert (detail.code, detail.category, detail.user_message) == (
        "peer_card_declined", kept, sentence,
    )  # fmt: skip
    assert detail.details["peer_user_message"].startswith(HTML)  # developer text, scrubbed
    assert "sk-[REDACTED]" in detail.details["peer_user_message"]
    if category is not None and kept == "unknown":
        assert detail.details["peer_category"] == category
    assert_trusted(detail)
    # the same on every way back: JSON, pickle, the exception's args, a cause
    again = rc.ErrorDetail.from_dict(json.loads(json.dumps(detail.to_dict())))
    assert again == detail
    assert pickle.loads(pickle.dumps(rc.RecoverableError(detail))).detail == detail
    assert rc.RecoverableError("m", detail.to_dict()).detail == detail
    wrapped = rc.ErrorDetail.from_dict({"code": "unknown", "message": "m", "cause": payload})
    assert isinstance(wrapped.cause, rc.ErrorDetail)
    assert wrapped.cause.user_message == sentence


def test_a_category_known_only_from_a_users_row_reads_as_unknown() -> None:
    # as the public view shows it (`_public`): a category is ours when it has a sentence
    rc.register_code("shop_out_of_stock", category="shop", user_message="Sold out.")
    try:
        detail = rc.ErrorDetail.from_dict(
            {"code": "shop_item_gone", "message": "m", "category": "shop", "user_message": HTML}
        )
    finally:
        rc.codes.unregister("shop_out_of_stock")
    assert (detail.category, detail.user_message) == ("unknown", rc.codes["unknown"].user_message)
    assert (detail.details["peer_category"], detail.details["peer_user_message"]) == ("shop", HTML)


def test_a_foreign_detail_keeps_its_category_sentence_when_changed() -> None:
    foreign = rc.ErrorDetail.from_dict(
        {"code": "peer_thing", "message": "m", "category": "network", "retryable": True}
    )
    changed = rc.RecoverableError(foreign, retry_after_ms=math.nan, details={"a": 1}).detail
    assert (changed.code, changed.user_message) == ("peer_thing", CATEGORY_SENTENCES["network"])
    assert changed.retry_after_ms is None
    assert_trusted(changed)


# --- keys are scrubbed and capped like values, on every entry path ----------------------------


class _Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no")


class _Speaking:
    def __str__(self) -> str:
        return "token=ephemeral-token-value"


class _Sneaky(str):
    def lower(self) -> str:  # never called: the key is read as a plain str
        raise RuntimeError("never called")


KEYS: list[tuple[object, str]] = [
    ("sk-proj-Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LzXcVb", "sk-[REDACTED]"),
    ("Authorization: Bearer tok_4f9a8b7c6d5e4f3a2b1c", "Authorization: [REDACTED]"),
    ("k" * 1_000_000, "k" * (MAX_MESSAGE_CHARS - 3) + "..."),
    (7, "7"),
    (None, "None"),
    (("a", 1), "('a', 1)"),
    (math.nan, "nan"),
    (_Unprintable(), "<unprintable _Unprintable>"),
    (_Speaking(), "token=[REDACTED]"),
    (_Sneaky("plain"), "plain"),
    ("bad \udcff key", "bad \ufffd key"),
]


@pytest.mark.parametrize(("key", "kept"), KEYS)
def test_a_key_is_cleaned_as_a_value_is_on_every_entry_path(key: object, kept: str) -> None:
    details = {key: "v", "nested": [{key: {key: "w"}}]}
    expected = {kept: "v", "nested": [{kept: {kept: "w"}}]}
    payload = {"code": "conflict", "message": "m", "details": details}
    top_level = {"code": "conflict", "message": "m", key: "v"}
    built = [
        rc.ErrorDetail.create("conflict", details=details),
        rc.RecoverableError("conflict", "m", details=details).detail,
        rc.RecoverableError(QUOTA, details=details).detail,
        copy_with(QUOTA, details=details),
        rc.ErrorDetail.from_dict(payload),
        rc.classify(payload),
        rc.RecoverableError("m", payload).detail,
    ]
    for detail in built:
        assert detail.details == expected
        assert_trusted(detail)
    if isinstance(key, str) and key not in ("code", "message"):
        assert rc.ErrorDetail.from_dict(top_level).details == {kept: "v"}
    text = key if isinstance(key, str) else kept  # JSON keys are text
    envelope = rc.Envelope.parse(
        json.dumps(
            {"ok": True, "data": 1, "error": None, "warnings": [{"k": {text: 1}}],
             "meta": {text: 1}}
        )
    )  # fmt: skip
    for key_kept in (*_keys(dict(envelope.meta)), *_keys(list(envelope.warnings))):
        assert type(key_kept) is str and len(key_kept) <= MAX_MESSAGE_CHARS
    _no_secret(dict(envelope.meta))


@pytest.mark.parametrize(
    "name",
    ["api_key", "API-KEY", "apikey", "x-api-key", "X-Goog-Api-Key", "Authorization", "token",
     "access_token", "refresh-token", "client_secret", "password", "passwd", "secret",
     "aws_secret_access_key", "SessionToken", "session_token", "Cookie", "set-cookie"],
)  # fmt: skip
def test_a_value_named_a_credential_by_its_key_is_redacted(name: str) -> None:
    detail = rc.ErrorDetail.create(
        "conflict", details={name: "0123456789abcdef0123456789abcdef", "n": [{name: 42}]}
    )
    assert detail.details == {name: REDACTED, "n": [{name: REDACTED}]}


@pytest.mark.parametrize(
    "name", ["key", "tokens", "input_tokens", "signal", "author", "keys", "PWD", "sig"]
)
def test_a_key_that_only_looks_like_a_credential_name_keeps_its_value(name: str) -> None:
    assert rc.ErrorDetail.create("conflict", details={name: "v"}).details == {name: "v"}


def test_keys_that_become_one_are_all_kept_and_numbered_in_order() -> None:
    secret_a, secret_b = "sk-proj-" + "a" * 30, "sk-proj-" + "b" * 30
    data = {secret_a: 1, secret_b: 2, 1: "int", "1": "str", "sk-[REDACTED]#2": "real"}
    kept = json_safe_dict(data)
    assert kept == {
        "sk-[REDACTED]": 1, "sk-[REDACTED]#2": 2, "1": "int", "1#2": "str",
        "sk-[REDACTED]#2#2": "real",
    }  # fmt: skip
    assert list(kept) == list(json_safe_dict(data))  # the same input, the same copy
    long_a, long_b = "x" * 5000 + "a", "x" * 5000 + "b"
    clipped = json_safe_dict({long_a: 1, long_b: 2})
    assert [len(key) for key in clipped] == [MAX_MESSAGE_CHARS, MAX_MESSAGE_CHARS]
    assert list(clipped)[1].endswith("...#2")


def test_a_payloads_unknown_key_that_collides_with_a_detail_is_kept_too() -> None:
    detail = rc.ErrorDetail.from_dict(
        {"code": "conflict", "message": "m", "details": {"trace": 1}, "trace": 2}
    )
    assert detail.details == {"trace": 1, "trace#2": 2}


def test_many_colliding_keys_stay_bounded() -> None:
    # 20 000 keys that scrub to one name: all numbered, the copy still stops at the budget.
    data = {f"sk-proj-{index:030d}": index for index in range(20_000)}
    kept = json_safe_dict(data)
    assert MAX_NODES - 1 <= len(kept) <= MAX_NODES + 1
    assert "sk-[REDACTED]#9000" in kept
    _no_secret(kept)


def test_a_million_unknown_keys_cost_the_budget_only() -> None:
    payload: dict[str, Any] = {"code": "conflict", "message": "m"}
    payload.update((f"k{index}", index) for index in range(1_000_000))
    detail = rc.ErrorDetail.from_dict(payload)
    assert len(detail.details) <= MAX_NODES + 1
    assert detail.details["<truncated>"] == "<truncated>"


def test_cyclic_and_deep_structure_with_hostile_keys_is_bounded() -> None:
    hostile: dict[Any, Any] = {}
    hostile["sk-proj-" + "f" * 30] = hostile
    hostile[("t",)] = [hostile, {"password": "p", "inner": hostile}]
    deep: Any = "bottom"
    for _ in range(50_000):
        deep = {"api_key=plainsecret123": deep}
    hostile["deep"] = deep
    detail = rc.ErrorDetail.from_dict(
        {"code": "conflict", "message": "m", "details": hostile, "x" * 10**6: hostile}
    )
    assert detail.details["sk-[REDACTED]"] == "<repeated>"
    assert detail.details["('t',)"][1]["password"] == REDACTED
    assert_trusted(detail)


# --- hypothesis: any values through every door keep every invariant ---------------------------

hostile_texts = texts | st.sampled_from([*HOSTILE, HTML, "x" * 5000 + " " + HOSTILE[0]])
hostile_keys = (
    hostile_texts
    | st.sampled_from(["k" * 1_000_000, "api_key", "Authorization", "x-api-key"])
    | st.integers()
    | st.none()
    | st.floats(allow_nan=True)
    | st.tuples(st.integers(), hostile_texts)
)
hostile_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | hostile_texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(hostile_keys, inner, max_size=4),
    max_leaves=20,
)
field_values = (
    hostile_json
    | json_like
    | st.sampled_from(
        [math.nan, math.inf, -1, 10**400, "rm -rf ~", "npm install -g @openai/codex", RATE, QUOTA]
    )
)
field_names = st.sampled_from(
    ["message", "retryable", "retry_after_ms", "fix_required", "fix_command", "status",
     "source", "cause", "details", "suggestion", "user_message", "category", "code",
     "recovery", "http_status"]
)  # fmt: skip
bases = st.sampled_from(
    [
        RATE, QUOTA, AUTH,
        rc.ErrorDetail.from_dict({"code": "peer_code", "message": "m", "category": "tool"}),
    ]
)  # fmt: skip
REFUSALS = (TypeError, ValueError)  # FixCommandRejected is a ValueError


@SETTINGS
@given(bases, st.dictionaries(field_names, field_values, max_size=5))
def test_any_changes_through_the_exception_and_copy_with_keep_every_invariant(
    base: rc.ErrorDetail, changes: dict[str, Any]
) -> None:
    for door in (
        lambda: rc.RecoverableError(base, **changes).detail,
        lambda: copy_with(base, **changes),
    ):
        try:
            detail = door()
        except REFUSALS:
            assert changes  # no change: nothing to refuse
            continue
        assert_trusted(detail, changes)
        assert detail.code == base.code


create_fields = st.sampled_from(
    ["retryable", "retry_after_ms", "fix_required", "fix_command", "status", "source", "cause",
     "details", "suggestion"]
)  # fmt: skip


@SETTINGS
@given(
    st.sampled_from([row.code for row in rc.codes]),
    st.none() | hostile_texts,
    st.dictionaries(create_fields, field_values, max_size=5),
)
def test_create_with_any_values_keeps_every_invariant(
    code: str, message: str | None, fields: dict[str, Any]
) -> None:
    try:
        detail = rc.ErrorDetail.create(code, message, **fields)
    except REFUSALS:
        return
    assert_trusted(detail, (message, fields))
    assert rc.ErrorDetail.from_dict(json.loads(json.dumps(detail.to_dict()))) == detail


@SETTINGS
@given(st.text(max_size=70).filter(lambda code: code not in rc.codes))
def test_create_with_any_unregistered_code_raises_a_value_error(code: str) -> None:
    with pytest.raises(ValueError, match="not registered"):
        rc.ErrorDetail.create(code)


payload_fields = st.sampled_from(
    ["message", "retryable", "retry_after_ms", "fix_required", "fix_command", "status",
     "source", "cause", "details", "suggestion", "user_message", "category"]
)  # fmt: skip


@st.composite
def hostile_payloads(draw: st.DrawFn) -> dict[Any, Any]:
    """A payload like ours (a known or a foreign code) with any values, hostile unknown keys
    and, at times, a cycle through its details or its cause."""
    code = draw(st.sampled_from(["provider_rate_limited", "invalid_input", "peer_code"]))
    payload: dict[Any, Any] = {"code": code, "message": draw(hostile_texts)}
    payload.update(draw(st.dictionaries(payload_fields, field_values | hostile_json, max_size=6)))
    payload.update(draw(st.dictionaries(hostile_keys, hostile_json, max_size=3)))
    if draw(st.booleans()):
        payload["details"] = {draw(hostile_keys): payload, "list": [payload]}
    if draw(st.booleans()):
        payload["cause"] = payload
    return payload


@SETTINGS
@given(hostile_payloads())
def test_from_dict_with_hostile_payloads_keeps_every_invariant(payload: dict[Any, Any]) -> None:
    for read in (
        lambda: rc.ErrorDetail.from_dict(payload),
        lambda: rc.RecoverableError("m", payload).detail,
    ):
        try:
            detail = read()
        except rc.PayloadError:
            continue
        assert_trusted(detail, payload)
        assert rc.ErrorDetail.from_dict(json.loads(json.dumps(detail.to_dict()))) == detail


@SETTINGS
@given(st.dictionaries(hostile_keys, hostile_json, max_size=6))
def test_json_safe_dict_is_deterministic_and_keeps_every_key_clean(data: dict[Any, Any]) -> None:
    kept = json_safe_dict(data)
    assert json.dumps(kept) == json.dumps(json_safe_dict(data))  # the same input, the same copy
    assert len(kept) == len(data)  # keys that became one were numbered, not lost
    for key in _keys(kept):
        assert type(key) is str and len(key) <= MAX_MESSAGE_CHARS
    _no_secret(kept, data)


# --- the library's own log records, spans and metrics ------------------------------------------


class Records(logging.Handler):
    """A real handler on the `recoverable` loggers, keeping every record formatted."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
        self.records: list[logging.LogRecord] = []
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)
        self.lines.append(self.format(record))  # the traceback too, if a record had one


@pytest.fixture
def records() -> Iterator[Records]:
    handler = Records()
    logger = logging.getLogger("recoverable")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


@pytest.fixture
def telemetry() -> Iterator[Telemetry]:
    before = rc.instrumentation.get_failure_hooks()
    found = Telemetry()
    otel.instrument(meter_provider=found.meters, include_message=True)
    try:
        yield found
    finally:
        rc.instrumentation.set_failure_hooks(before)


def _marked_payload(text: str) -> dict[str, Any]:
    """A payload with the marker in every developer-facing input, keys included."""
    return {
        "code": "provider_overloaded", "message": text, "source": text, "fix_required": text,
        "suggestion": text, "user_message": text, "category": text, text: text,
        "details": {text: text, "nested": [{text: {text: text}}], "x-api-key": "abc"},
        "cause": {"code": "peer_code", "message": text, "user_message": text,
                  "details": {text: text}, "cause": text},
    }  # fmt: skip


def _failures(text: str) -> list[BaseException]:
    """Failures carrying `text` every way an exception can: message, cause chain, payload."""
    chained = RuntimeError(f"wrapper {text}")
    chained.__cause__ = ConnectionResetError(f"reset {text}")
    return [
        ConnectionResetError(f"reset by {text}"),
        chained,
        ValueError(f"bad {text}"),
        rc.RecoverableError("m", _marked_payload(text)),
        rc.RecoverableError("provider_rate_limited", text, source=text, details={text: text}),
    ]


def _no_marker(written: str) -> None:
    for secret in SECRETS:
        assert secret not in written
    assert "Traceback" not in written


@pytest.mark.parametrize(("text", "secret"), CREDENTIALS[:6] + CREDENTIALS[-4:])
def test_no_log_record_span_or_metric_carries_a_credential(
    text: str, secret: str, records: Records, telemetry: Telemetry
) -> None:
    marked = f"failed with {text} here"

    def broken_hook(event: rc.instrumentation.FailureEvent) -> None:
        raise RuntimeError(f"exporter down: {marked}")

    rc.instrumentation.set_failure_hooks([*rc.instrumentation.get_failure_hooks(), broken_hook])
    for failure in _failures(marked):
        with (
            telemetry.tracer.start_as_current_span("call"),
            pytest.raises((rc.RecoverableError, ValueError)),
        ):
            rc.retry(attempts=2, sleep=lambda seconds: None).call(_raises(failure))
        with telemetry.tracer.start_as_current_span("by hand") as span:
            otel.record_error(failure, span, include_message=True)  # type: ignore[arg-type]
        report(FailureEvent("run_failed", failure, name=marked))  # type: ignore[arg-type]
    assert records.records  # the default hook and the broken one wrote lines
    assert all(record.exc_info is None and record.stack_info is None for record in records.records)
    written = "\n".join([*records.lines, *(repr(r.__dict__) for r in records.records)])
    written += telemetry.written()
    assert secret not in written
    _no_marker(written)
    assert "exporter down: failed with" in written  # the hook's words, scrubbed


def test_a_failure_event_classifies_what_is_not_a_detail_and_cleans_its_fields() -> None:
    event = FailureEvent(
        "retry", ConnectionRefusedError("refused"), attempt="2", wait_s=math.nan,  # type: ignore[arg-type]
        name="task sk-proj-" + "g" * 30,
    )  # fmt: skip
    assert event.detail.code == "network_error"
    assert (event.attempt, event.wait_s, event.name) == (None, None, "task sk-[REDACTED]")
    assert FailureEvent("retry", RATE, attempt=2, wait_s=0.5).wait_s == 0.5


def test_the_spans_attributes_are_scrubbed_whoever_built_the_detail() -> None:
    smuggled = copy.copy(QUOTA)
    object.__setattr__(smuggled, "source", "sk-proj-" + "h" * 30)  # what no door builds
    object.__setattr__(smuggled, "message", "Bearer " + "i" * 30)
    found = otel.attributes(smuggled, include_message=True)
    assert (found["recoverable.source"], found["recoverable.message"]) == (
        "sk-[REDACTED]", "Bearer [REDACTED]",
    )  # fmt: skip
