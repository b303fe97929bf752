"""What FakeProvider answers with: `Fault` and `Reply`, their constructors and checks."""

from __future__ import annotations

import pytest

from recoverable.testing import Fault, Reply
from recoverable.testing._faults import FAULT_NAMES


def test_fault_named_builds_each_argument_free_fault() -> None:
    assert "status" not in FAULT_NAMES  # it needs a code
    for name in FAULT_NAMES:
        assert Fault.named(name) == getattr(Fault, name)()
    with pytest.raises(ValueError, match="unknown fault 'status'"):
        Fault.named("status")


def test_cut_stream_refuses_a_negative_count() -> None:
    with pytest.raises(ValueError, match="after must be"):
        Fault.cut_stream(after=-1)


def test_status_refuses_a_code_out_of_range() -> None:
    with pytest.raises(ValueError, match="out of range"):
        Fault.status(99)


def test_tool_call_needs_a_name() -> None:
    with pytest.raises(ValueError, match="needs a name"):
        Reply.tool_call("")


def test_tool_call_needs_json_arguments() -> None:
    with pytest.raises(TypeError, match="not JSON serializable"):
        Reply.tool_call("f", {"x": object()})


def test_tool_call_then_answers_a_tool_result_with_text() -> None:
    reply = Reply.tool_call("get_weather", {"city": "Paris"}, then="Sunny.")
    assert reply.answering(has_tool_result=False) is reply
    assert reply.answering(has_tool_result=True) == Reply.text("Sunny.")


def test_tool_call_without_then_answers_every_request_with_the_call() -> None:
    assert Reply.tool_call("f").then is None
    assert Reply.tool_call("f").answering(has_tool_result=True).kind == "tool_call"
