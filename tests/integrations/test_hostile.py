"""What an engine gives back is untrusted: a forged or mangled payload in a Temporal failure,
a Celery result or a DBOS stored error never makes the readers raise, never brings its own
user sentence or an unregistered command, and always comes back as a registered code
(hypothesis)."""

from __future__ import annotations

import json
from typing import Any

from dbos import PortableWorkflowError
from hypothesis import given
from hypothesis import strategies as st
from temporalio.exceptions import ApplicationError

import recoverable as rc
from recoverable._core.codes import validate_fix_command
from recoverable.integrations import celery as rcc
from recoverable.integrations import dbos as rdb
from recoverable.integrations import temporal as rt

from ..core.test_detail_properties import SETTINGS, codes, json_like, texts

# A payload that looks like ours: a real code, then any value in any field.
FIELDS = ("message", "retryable", "retry_after_ms", "fix_command", "fix_required",
          "user_message", "status", "source", "cause", "details", "category")  # fmt: skip
forged = st.fixed_dictionaries(
    {"code": codes | texts}, optional={name: json_like for name in FIELDS}
)
payloads = forged | json_like


def readers(payload: Any) -> list[rc.ErrorDetail]:
    return [
        rt.read_error(ApplicationError("m", payload, type="provider_rate_limited")),
        rcc.read_error(Exception("m", payload)),
        rdb.read_error(PortableWorkflowError("m", "RecoverableStepError", 1, payload)),
    ]


@SETTINGS
@given(payloads)
def test_a_forged_payload_is_read_safely(payload: Any) -> None:
    for detail in readers(payload):
        row = rc.codes.get(detail.code)
        if row is not None:
            assert detail.user_message == row.user_message  # never the payload's words
        if detail.fix_command is not None:
            validate_fix_command(detail.fix_command)  # only what the registry's rules allow
        json.dumps(detail.to_dict(), allow_nan=False)  # strict JSON, whatever came in
        if detail.retryable:
            assert detail.fix_command is None


@SETTINGS
@given(codes, texts, st.integers(min_value=0, max_value=10**12) | st.none())
def test_every_detail_crosses_each_engine_unchanged(
    code: str, message: str, hint: int | None
) -> None:
    detail = rc.ErrorDetail.create(code, message or None, retry_after_ms=hint)
    assert rt.read_error(rt.to_application_error(detail, max_retry_after_ms=10**13)) == (detail)
    stored = Exception(detail.message, detail.to_dict())  # what Celery's JSON backend rebuilds
    assert rcc.read_error(stored) == detail
    portable = PortableWorkflowError(detail.message, "RecoverableStepError", code, detail.to_dict())
    assert rdb.read_error(portable) == detail
