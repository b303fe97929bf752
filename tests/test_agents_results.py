"""What a run's parse state keeps: bounded (the answer's text, the failures, the tools)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import recoverable as rc
from recoverable.agents._answer import AnswerText
from recoverable.agents._parsing import KEPT_ERRORS, KEPT_TOOLS, ParseState

# --- the answer's text ------------------------------------------------------------------------

# What the parsers do to `text_parts` (append a delta, drop the deltas from an index on), and
# what the runner does after each read (compact).
_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.text(max_size=12)),
        st.tuples(st.just("del"), st.integers(min_value=0, max_value=400)),
        st.tuples(st.just("compact"), st.none()),
    ),
    max_size=300,
)


@settings(max_examples=300, deadline=None, database=None)
@given(ops=_OPS, limit=st.integers(min_value=0, max_value=40))
def test_answer_text_is_a_list_of_deltas_that_keeps_the_last_characters(
    ops: list[tuple[str, Any]], limit: int
) -> None:
    """Until a cut, exactly the last `limit` characters; after one, the end of what is left
    (text dropped for the limit does not come back when later text is cut)."""
    parts, model, cut = AnswerText(limit), [], False
    for op, value in ops:
        if op == "append":
            parts.append(value)
            model.append(value)
        elif op == "compact":
            parts.compact()
            assert parts.size <= 2 * limit + 12  # what is kept stays bounded
        else:
            cut = cut or value < len(model)
            del parts[value:]
            del model[value:]
        assert (len(parts), bool(parts)) == (len(model), bool(model))
        whole, kept = "".join(model), parts.text()
        assert whole.endswith(kept)
        assert len(kept) <= limit
        if not cut:
            assert kept == (whole[-limit:] if limit else "")


def test_a_million_one_character_deltas_stay_small() -> None:
    parts = AnswerText(1000)
    for n in range(1_000_000):
        parts.append("x")
        if n % 500 == 0:  # as the runner does after each read
            parts.compact()
    assert (len(parts), parts.text()) == (1_000_000, "x" * 1000)
    assert (len(parts.pieces) < 10, len(parts.loose) < 500, len(parts.lengths) <= 2000) == (
        True, True, True,
    )  # fmt: skip


def test_only_del_from_an_index_on_is_supported() -> None:
    parts = AnswerText(10)
    with pytest.raises(TypeError):
        del parts[1:2]


# --- the parse state --------------------------------------------------------------------------


def test_the_parse_state_keeps_the_last_errors_and_tools_and_remembers_a_tool_ran() -> None:
    state = ParseState("fake")
    details = [rc.ErrorDetail.create("unknown", f"e{n}") for n in range(100)]
    for detail in details:
        state.terminal_failure(detail)
    assert list(state.errors) == details[-KEPT_ERRORS:]
    for n in range(3 * KEPT_TOOLS):
        state.start_tool(f"t{n}", f"tool{n}")
    assert len(state.tool_names) == KEPT_TOOLS
    assert next(iter(state.tool_names)) == f"t{2 * KEPT_TOOLS}"
    state.end_tool(f"t{3 * KEPT_TOOLS - 1}", False)
    assert (state.tool_started, state.last_failed_tool) == (True, f"tool{3 * KEPT_TOOLS - 1}")
