"""What a run's result keeps: bounded (its events, its text, the parse state behind it) and
scrubbed (the end of stderr).

The text a consumer gets as `TextDelta` events is never cut; only what a result (and the
parser's state) keeps is. `stream` / `stream_sync` keep no event they yielded unless told;
`run` / `run_sync` the last RUN_KEEP_EVENTS.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import recoverable as rc
from recoverable import agents
from recoverable.agents import ErrorEvent, RunOptions, TextDelta
from recoverable.agents._answer import AnswerText
from recoverable.agents._options import RUN_KEEP_EVENTS
from recoverable.agents._parsing import KEPT_ERRORS, KEPT_TOOLS, ParseState
from recoverable.agents._replay import EventLog
from recoverable.agents._run_sync import run_process_sync

from ..support.runner import CLAUDE_TEXT, MODULE, executable, script

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


# --- the events a result keeps ----------------------------------------------------------------


def test_the_event_log_keeps_the_last_events_within_its_count_and_bytes() -> None:
    log = EventLog(limit=3, max_bytes=100)
    for n in range(10):
        log.add(TextDelta(str(n)), 10)
    assert [event.text for event in log.events] == ["7", "8", "9"]  # type: ignore[union-attr]
    log.add(TextDelta("big"), 95)
    assert [event.text for event in log.events] == ["big"]  # type: ignore[union-attr]
    nothing = EventLog(limit=0)
    failure = ErrorEvent(rc.ErrorDetail.create("unknown", "x"))
    nothing.add(failure)
    assert (list(nothing.events), nothing.sent(failure.detail)) == ([], True)


def _run_events(argv: list[str], **options: Any) -> list[Any]:
    return list(run_process_sync(MODULE, argv, RunOptions(**options)))  # type: ignore[arg-type]


def test_a_stream_keeps_no_event_and_yields_every_one(tmp_path: Path) -> None:
    argv = script(
        tmp_path, 'for n in range(50):\n    say(type="text", text=str(n))\nsay(type="done")\n'
    )
    events = _run_events(argv)
    assert [e.text for e in events if isinstance(e, TextDelta)] == [str(n) for n in range(50)]
    assert events[-1].result.events == ()
    assert events[-1].result.text == "".join(str(n) for n in range(50))


def test_a_counted_result_keeps_the_last_events_and_its_deciding_error(tmp_path: Path) -> None:
    """A failure the end decides (no terminal event: exit 3) is sent once, and kept."""
    argv = script(tmp_path, """
        say(type="text", text="a")
        sys.exit(3)
    """)  # fmt: skip
    events = _run_events(argv, keep_events=1)
    result = events[-1].result
    assert [type(e).__name__ for e in events] == ["TextDelta", "ErrorEvent", "Done"]
    assert result.events == (events[1],)  # the deciding error, the last one
    assert result.error is events[1].detail


def test_a_deciding_error_that_left_the_kept_events_is_not_sent_again(tmp_path: Path) -> None:
    """The terminal event's failure is sent, then falls out of the kept events."""
    argv = script(tmp_path, """
        say(type="fail")
        for n in range(5):
            say(type="text", text=str(n))
    """)  # fmt: skip
    events = _run_events(argv, keep_events=2)
    result = events[-1].result
    assert [type(e).__name__ for e in events] == ["ErrorEvent", *["TextDelta"] * 5, "Done"]
    assert result.error is events[0].detail
    assert (result.error.code, result.events) == ("provider_overloaded", tuple(events[4:6]))


def test_the_text_a_result_keeps_is_cut_and_the_deltas_are_not(tmp_path: Path) -> None:
    argv = script(tmp_path, 'say(type="text", text="Hello ")\nsay(type="text", text="world")\n'
                            'say(type="done")\n')  # fmt: skip
    events = _run_events(argv, max_text_chars=7, keep_events=None)
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hello ", "world"]
    assert events[-1].result.text == "o world"


def _last_result(events: Iterable[agents.Event]) -> agents.RunResult:
    done = list(events)[-1]
    assert isinstance(done, agents.Done)
    return done.result


async def test_run_keeps_its_bound_and_stream_keeps_none(tmp_path: Path) -> None:
    """The public entry points: `run` / `run_sync` keep the last RUN_KEEP_EVENTS events unless
    told, `stream` / `stream_sync` none; `keep_events` says otherwise for either."""
    lines = CLAUDE_TEXT.splitlines()
    body = (
        f"LINES = {lines!r}\nfor _ in range(3000):\n    print(LINES[1])\nprint(*LINES, sep='\\n')\n"
    )
    options = RunOptions(executable=executable(tmp_path, body))
    streamed = [event async for event in agents.stream("hi", "claude", options=options)]
    synced = agents.stream_sync("hi", "claude", options=options)
    kept = {
        "run": len((await agents.run("hi", "claude", options=options)).events),
        "run_sync": len(agents.run_sync("hi", "claude", options=options).events),
        "run_sync(keep_events=5)": len(
            agents.run_sync("hi", "claude", options=options, keep_events=5).events
        ),
        "stream": len(_last_result(streamed).events),
        "stream_sync": len(_last_result(synced).events),
        "stream_sync(keep_events=None)": len(_last_result(
            agents.stream_sync("hi", "claude", options=options, keep_events=None)
        ).events),
    }  # fmt: skip
    everything = kept["stream_sync(keep_events=None)"]
    assert everything > 3000
    assert kept == {
        "run": min(everything, RUN_KEEP_EVENTS), "run_sync": min(everything, RUN_KEEP_EVENTS),
        "run_sync(keep_events=5)": 5, "stream": 0, "stream_sync": 0,
        "stream_sync(keep_events=None)": everything,
    }  # fmt: skip


# --- secrets ----------------------------------------------------------------------------------

KEY = "sk-ant-api03-" + "Abc123" * 8


@pytest.mark.parametrize("where", ["stderr only", "stderr, then far more of it"])
def test_the_stderr_tail_and_the_error_carry_no_credential(tmp_path: Path, where: str) -> None:
    """claude's outcome quotes its stderr: the quote and the tail are scrubbed alike."""
    more = 'sys.stderr.write("x" * 8100 + "\\n")\n' if where != "stderr only" else ""
    binary = executable(tmp_path, f"""
        sys.stderr.write("Invalid API key · ANTHROPIC_API_KEY={KEY}\\n")
        sys.stderr.write("Authorization: Bearer {KEY[::-1]}\\n")
        {more}sys.exit(1)
    """)  # fmt: skip
    result = agents.run_sync("hi", "claude", executable=binary)
    assert result.error is not None
    dumped = json.dumps(result.to_dict(with_events=True))
    assert KEY not in dumped
    assert KEY[::-1] not in dumped
    assert KEY[20:40] not in dumped  # nor a piece of it
    assert "[REDACTED]" in result.stderr_tail


def _tool_results(*outcomes: tuple[str, bool]) -> bytes:
    blocks = [
        {"type": "tool_result", "tool_use_id": tool_id, "content": "boom", "is_error": not ok}
        for tool_id, ok in outcomes
    ]
    return json.dumps({"type": "user", "message": {"content": blocks}}).encode() + b"\n"


@pytest.mark.parametrize("keep", [0, None])
def test_the_guardrail_reads_the_count_each_line_leaves(keep: int | None) -> None:
    from recoverable._core.events import ToolEnd
    from recoverable.agents import _claude
    from recoverable.agents._process import RunContext

    context = RunContext(_claude, RunOptions(max_tool_failures=3, keep_events=keep), lambda: 0.0)
    stdout = b"".join([
        _tool_results(("a", False)),
        _tool_results(("b", False)),
        _tool_results(("c", False), ("d", True)),  # 3 in a row on the way, 0 when the line ends
        _tool_results(("e", False), ("f", False), ("g", False)),  # stops after its first end
        b'{"type": "assistant", "message": {"content": "never read"}}\n',
    ])  # fmt: skip
    events = context.chunk_events(stdout)
    assert [(e.tool_id, e.success) for e in events if isinstance(e, ToolEnd)] == [
        ("a", False), ("b", False), ("c", False), ("d", True), ("e", False),
    ]  # fmt: skip
    assert events[-1] == ToolEnd("e", False, error="boom", detail=events[-1].detail)
    assert context.stopped_by is not None
    assert (context.stopped_by.code, context.stopped_by.details) == (
        "run_tool_failures", {"tool": "g", "failures": 3},
    )  # fmt: skip
    assert context.state.text == ""
    kept = list(context.log.events)
    assert kept == ([] if keep == 0 else events)
