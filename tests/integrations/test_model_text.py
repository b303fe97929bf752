"""What a model reads of a failed tool call is ours whatever the failure says (hypothesis): a
forged detail (any code, sentence, hint, fix) or an exception with any text never puts its
words before the model, and the hooks of the three frameworks never raise on one."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import agents as oa
import recoverable as rc
from recoverable._core.categories import CATEGORY_SENTENCES
from recoverable._core.public import FIX_REQUIRED_SENTENCE
from recoverable.integrations import _model_text as mt
from recoverable.integrations import langgraph as rcl
from recoverable.integrations import openai_agents as rco
from recoverable.integrations import pydantic_ai as rcp
from recoverable.testing import Fault, sdk_error

from ..core.test_detail_properties import SETTINGS, codes, json_like, texts

MARK = "zq-developer-text-zq"  # in every forged field: it must never reach the model
SENTENCES = {row.user_message for row in rc.codes} | set(CATEGORY_SENTENCES.values())
FIXES = {row.fix_required for row in rc.codes if row.fix_required} | {FIX_REQUIRED_SENTENCE}
hints = st.none() | st.integers() | st.floats(allow_nan=True) | st.booleans() | json_like


def _forged(code: str, retryable: Any, hint: Any, text: str) -> rc.ErrorDetail:
    """A detail that passed no door (an unpickled value, another copy's): each field as given."""
    said = f"{MARK}{text}"
    detail = copy.copy(rc.ErrorDetail.create("unknown"))
    fields = {"code": code, "retryable": retryable, "retry_after_ms": hint, "details": {"x": said}}
    for name in ("message", "category", "fix_required", "user_message", "source", "suggestion"):
        fields[name] = said
    for name, value in fields.items():
        object.__setattr__(detail, name, value)
    return detail


def _check_ours(read: dict[str, Any]) -> None:
    assert rc.codes.get(read["code"]) is not None
    assert read["message"] in SENTENCES
    assert read["fix_required"] is None or read["fix_required"] in FIXES
    assert read["next_step"] in {mt.FIX_STEP, mt.STOP_STEP} or read["next_step"].startswith(
        "Call the tool again with the same arguments after "
    )
    wait = read["retry_after_ms"]
    assert wait is None or (type(wait) is int and wait >= 0)


@SETTINGS
@given(code=codes | texts, retryable=st.booleans() | json_like, hint=hints, text=texts)
def test_a_forged_detail_reads_as_ours(code: str, retryable: Any, hint: Any, text: str) -> None:
    detail = _forged(code, retryable, hint, text)
    written = mt.model_text(detail)
    assert MARK not in written
    envelope = json.loads(written)
    assert envelope["ok"] is False
    _check_ours(envelope["error"])
    assert MARK not in mt.model_sentence(detail)


@SETTINGS
@given(text=texts)
def test_an_exception_says_nothing_of_its_own(text: str) -> None:
    error = ValueError(f"{MARK}{text}")
    assert MARK not in rcl.tool_error_text(error)
    assert rcl.retry_on(error) is False
    assert rcp.fallback_on(error) is False
    assert MARK not in rco.failure_error_function(None, error)  # type: ignore[arg-type]


def test_the_next_step_follows_the_classification() -> None:
    limited = rc.classify(sdk_error("openai", Fault.rate_limited(retry_after=2)))
    assert mt.next_step(limited) == "Call the tool again with the same arguments after 2 seconds."
    assert mt.next_step(rc.ErrorDetail.create("tool_input_invalid")) == mt.FIX_STEP
    assert mt.next_step(rc.ErrorDetail.create("tool_not_found")) == mt.FIX_STEP
    quota = rc.classify(sdk_error("openai", Fault.insufficient_quota()))
    assert mt.next_step(quota) == mt.STOP_STEP
    assert mt.next_step(rc.ErrorDetail.create("unknown", "x")) == mt.STOP_STEP


def test_the_agents_tool_formatter_keeps_the_sdks_approval_text() -> None:
    args = oa.ToolErrorFormatterArgs(
        kind="approval_rejected",
        tool_type="function",
        tool_name="t",
        call_id="c",
        default_message="rejected",
        run_context=None,  # type: ignore[arg-type]
    )
    assert rco.tool_error_formatter(args) is None
    missing = rco.tool_error_formatter(
        oa.ToolErrorFormatterArgs(
            kind="tool_not_found",
            tool_type="function",
            tool_name="t",
            call_id="c",
            default_message="x",
            run_context=None,  # type: ignore[arg-type]
        )
    )
    assert missing is not None
    assert json.loads(missing)["error"]["code"] == "tool_not_found"
