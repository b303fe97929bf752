"""Users' classifier stages (`rc.add_classifier`): how a stage must answer, and what happens
to one that does not (skipped, and logged on the `recoverable` logger, never silently)."""

from __future__ import annotations

import logging

import pytest

import recoverable as rc


class BillingHiccup(Exception):
    """An error of the caller's own, which only the caller's stage knows."""


def _billing_stage(exc: BaseException) -> rc.ErrorDetail | None:
    if isinstance(exc, BillingHiccup):
        return rc.ErrorDetail.create("payment_required", str(exc), source="billing")
    return None  # not mine: the next stage decides


def test_a_stage_answers_a_detail_or_none() -> None:
    remove = rc.add_classifier(_billing_stage)
    try:
        detail = rc.classify(BillingHiccup("card declined"))
        assert (detail.code, detail.source, detail.exit_code) == ("payment_required", "billing", 9)
        assert rc.classify(TimeoutError("slow")).code == "timeout"  # None: the built-ins decide
    finally:
        remove()
    assert rc.classify(BillingHiccup("card declined")).code == "unknown"


def _broken_stage(exc: BaseException) -> rc.ErrorDetail | None:
    raise KeyError("a bug in the stage")


def _wrong_answer(exc: BaseException) -> rc.ErrorDetail | None:
    return "provider_rate_limited"  # type: ignore[return-value]


@pytest.mark.parametrize(
    ("stage", "said", "traceback"),
    [
        (_broken_stage, "classifier stage _broken_stage raised; skipped", True),
        (_wrong_answer, "classifier stage _wrong_answer answered a str, not an ErrorDetail or"
         " None; skipped", False),
    ],
)  # fmt: skip
def test_a_stage_that_raises_or_answers_wrong_is_skipped_and_logged(
    stage: rc.Stage, said: str, traceback: bool, caplog: pytest.LogCaptureFixture
) -> None:
    remove = rc.add_classifier(stage)
    try:
        with caplog.at_level(logging.WARNING, logger="recoverable"):
            detail = rc.classify(ConnectionRefusedError(111, "Connection refused"))
    finally:
        remove()
    assert (detail.code, detail.retryable) == ("network_error", True)  # the next stages answered
    [record] = [r for r in caplog.records if r.name == "recoverable"]
    assert (record.levelno, record.getMessage()) == (logging.WARNING, said)
    assert record.exc_info is None  # no formatter renders the exception's own words
    if traceback:  # where it happened: frames and classes, never the exception's message
        assert record.exc_text.startswith("Traceback (most recent call last; messages withheld)")
        assert record.exc_text.endswith("builtins.KeyError")
        assert "in _broken_stage" in record.exc_text
        assert "a bug in the stage" not in logging.Formatter().format(record)
    else:
        assert record.exc_text is None
