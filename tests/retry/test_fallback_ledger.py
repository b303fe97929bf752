"""One fallback rule and one chain of failures (`_retry.ledger.FallbackLedger`), the same for
`rc.fallback` and for the AI CLIs' order (`agents._fallback.FallbackGate`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import recoverable as rc
from recoverable import agents
from recoverable._retry.ledger import FallbackLedger
from recoverable.agents._fallback import FallbackGate

CODES = [row.code for row in rc.codes]


def _detail(code: str, source: str = "test") -> rc.ErrorDetail:
    return rc.ErrorDetail.create(code, f"{code} failed", source=source)


@pytest.mark.parametrize("side_effects", [False, True])
@pytest.mark.parametrize("row", list(rc.codes), ids=lambda row: row.code)
def test_moving_on_is_the_fallback_column_without_side_effects(
    row: Any, side_effects: bool
) -> None:
    ledger = FallbackLedger()
    failure = _detail(row.code)
    moved = ledger.moves_on(failure, side_effects=side_effects)
    assert moved == (row.fallback and not side_effects)
    assert ledger.failures == ([failure] if moved else [])


@given(st.lists(st.tuples(st.sampled_from(CODES), st.booleans()), min_size=1, max_size=8))
def test_the_ledger_keeps_what_moved_on_in_order_and_chains_it_first_deepest(
    failures: list[tuple[str, bool]],
) -> None:
    ledger = FallbackLedger()
    moved = [
        detail
        for detail, side_effects in ((_detail(code), side) for code, side in failures)
        if ledger.moves_on(detail, side_effects=side_effects)
    ]
    assert ledger.failures == moved
    if not moved:
        return
    links: list[str] = []
    link: rc.ErrorDetail | None = ledger.chain()
    while link is not None:
        links.append(link.code)
        link = link.cause
    assert links == [detail.code for detail in reversed(moved)]


def test_a_shared_list_is_kept_not_copied() -> None:
    shared: list[rc.ErrorDetail] = []
    FallbackLedger(shared).moves_on(_detail("provider_overloaded"))
    FallbackLedger(shared).moves_on(_detail("provider_quota_exceeded"))
    assert [d.code for d in shared] == ["provider_overloaded", "provider_quota_exceeded"]


def test_a_cancel_never_moves_on_the_table_refuses_a_cancel_that_falls_back() -> None:
    """The ledger reads only the column; the table keeps a cancel's row from saying so."""
    row = rc.codes["run_cancelled"]
    for flag in ("fallback", "retryable"):
        with pytest.raises(ValueError, match="a cancel \\(exit_code 130\\)"):
            rc.codes.register(
                "run_cancelled",
                category=row.category,
                exit_code=row.exit_code,
                http_status=row.http_status,
                user_message=row.user_message,
                replace=True,
                **{flag: True},
            )
    assert rc.codes["run_cancelled"] == row
    cancelled = _detail("run_cancelled", "claude")
    assert not FallbackLedger().moves_on(cancelled)

    def stop() -> str:
        raise rc.RecoverableError(cancelled)

    calls: list[str] = []
    with pytest.raises(rc.RecoverableError) as raised:
        rc.fallback([stop, lambda: calls.append("second") or "answer"])
    assert (raised.value.code, calls) == ("run_cancelled", [])
    gate = FallbackGate([], "codex")
    [*_, done] = gate.feed(agents.Done(agents.RunResult(False, error=cancelled, cli="claude")))
    assert gate.finished and isinstance(done, agents.Done)


def _raising(code: str) -> Callable[[], str]:
    def candidate() -> str:
        raise rc.RecoverableError(code, f"{code} failed")

    candidate.__name__ = code
    return candidate


def test_fallback_and_the_cli_order_chain_their_failures_alike() -> None:
    codes = ["provider_overloaded", "provider_quota_exceeded", "provider_rate_limited"]
    with pytest.raises(rc.RecoverableError) as raised:
        rc.fallback([_raising(code) for code in codes])
    python_chain = _codes(raised.value.detail.cause)
    failures: list[rc.ErrorDetail] = []
    clis = ["claude", "codex", "gemini"]
    for index, (code, cli) in enumerate(zip(codes, clis, strict=True)):
        gate = FallbackGate(failures, clis[index + 1] if index + 1 < len(clis) else None)
        error = _detail(code, cli)
        out = gate.feed(agents.Done(agents.RunResult(False, error=error, cli=cli)))
    [done] = out
    assert isinstance(done, agents.Done) and done.result.error is not None
    assert [f.code for f in done.result.failures] == codes[:2]
    assert _codes(done.result.error) == python_chain == list(reversed(codes))


def _codes(detail: rc.ErrorDetail | None) -> list[str]:
    found: list[str] = []
    while detail is not None:
        found.append(detail.code)
        detail = detail.cause
    return found
