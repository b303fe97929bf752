"""Generated code (`recoverable._core.generated`): compiled under its own name, its lines shown.

The library's one speed mechanism writes a few hot functions out from data (the detail's
builders from its fields, the events' `__init__`s, the scrubber from its table). These tests
hold what makes that visible: a traceback through a generated function shows the generated
line that raised, `inspect` reads the source, and the builders list every field.
"""

from __future__ import annotations

import dataclasses
import inspect
import linecache
import traceback
from typing import Any

import pytest

import recoverable as rc
from recoverable._core import detail as detail_module
from recoverable._core.events import Error, Raw, TextDelta, ToolEnd, ToolStart, TurnEnd
from recoverable._core.generated import filename_of, generate
from recoverable._core.secrets import scrub


def _last_frame(error: BaseException) -> traceback.FrameSummary:
    return traceback.extract_tb(error.__traceback__)[-1]


def test_a_generated_function_s_traceback_shows_its_generated_line() -> None:
    source = "def halve(value):\n    half = value // 2\n    return 10 // half\n"
    halve = generate("test.halve", source, {"__name__": __name__})
    assert halve(8) == 2
    with pytest.raises(ZeroDivisionError) as raised:
        halve(1)
    frame = _last_frame(raised.value)
    assert frame.filename.startswith("<recoverable generated test.halve")
    assert (frame.lineno, frame.line) == (3, "return 10 // half")
    formatted = "".join(traceback.format_exception(raised.value))
    assert "return 10 // half" in formatted
    assert halve.__qualname__ == "test.halve"
    assert halve.__module__ == __name__
    assert inspect.getsource(halve) == source


def test_the_lines_survive_linecache_s_check_and_a_name_taken_gets_its_own_file() -> None:
    first = generate("test.same", "def same():\n    return 1\n", {})
    second = generate("test.same", "def same():\n    return 2\n", {})
    linecache.checkcache()  # drops stale files: never a generated one (it has no mtime)
    assert first.__code__.co_filename != second.__code__.co_filename
    assert linecache.getline(first.__code__.co_filename, 2) == "    return 1\n"
    assert linecache.getline(second.__code__.co_filename, 2) == "    return 2\n"
    again = generate("test.same", "def same():\n    return 1\n", {})  # the same text: its file
    assert again.__code__.co_filename == first.__code__.co_filename == filename_of("test.same")


def test_the_detail_builders_are_generated_from_every_field() -> None:
    fields = [item.name for item in dataclasses.fields(rc.ErrorDetail)]
    assert list(detail_module.FIELDS) == fields
    for builder in (detail_module.build, detail_module.from_row, detail_module.rewrapped):
        stores = [
            line.split("=")[0].strip().removeprefix("made.")
            for line in inspect.getsource(builder).splitlines()
            if line.strip().startswith("made.")
        ]
        assert builder.__code__.co_filename == filename_of(builder.__name__)
        made = [*fields, "__class__"]  # every field once, in order, then frozen
        assert stores in (made, made * 2)  # from_row: once when retryable, once when not
    assert list(detail_module.fields_of(rc.ErrorDetail.create("unknown", "m"))) == fields
    detail = rc.ErrorDetail.create("provider_overloaded", "busy", status=529, source="openai")
    assert detail_module.build(**detail_module.fields_of(detail)) == detail


def test_a_detail_builder_s_traceback_shows_the_generated_line() -> None:
    class Broken:
        retryable = True

        @property
        def code(self) -> str:
            raise LookupError("no code")

    with pytest.raises(LookupError) as raised:
        detail_module.from_row(Broken(), "m", None, None, None, details={})  # type: ignore[arg-type]
    frame = _last_frame(raised.value)
    previous = traceback.extract_tb(raised.value.__traceback__)[-2]
    assert frame.name == "code"
    assert (previous.filename, previous.line) == (
        "<recoverable generated from_row>",
        "made.code = row.code",
    )


def test_the_scrubber_s_traceback_shows_its_generated_line() -> None:
    with pytest.raises(TypeError) as raised:
        scrub(5)  # type: ignore[arg-type]
    frame = _last_frame(raised.value)
    assert frame.filename == "<recoverable generated scrub>"
    assert frame.line == "if '-' in text:"
    assert scrub("key sk-abcdefghijklmnopqrstuvwx") == "key sk-[REDACTED]"


@pytest.mark.parametrize(
    ("event", "arguments"),
    [
        (TextDelta, ("a",)),
        (ToolStart, ("t1", "Bash", {"command": "ls"})),
        (ToolEnd, ("t1", False, "out", "err", rc.ErrorDetail.create("unknown", "m"))),
        (TurnEnd, ({"input_tokens": 1},)),
        (Error, (rc.ErrorDetail.create("unknown", "m"), "warning")),
        (Raw, ("claude", {"type": "x"})),
    ],
)
def test_an_event_s_generated_init_sets_every_field(event: Any, arguments: tuple[Any, ...]) -> None:
    names = [item.name for item in dataclasses.fields(event)]
    made = event(*arguments)
    assert [getattr(made, name) for name in names] == list(arguments)
    assert made == event(**dict(zip(names, arguments, strict=True)))
    source = inspect.getsource(event.__init__)
    assert event.__init__.__qualname__ == f"{event.__name__}.__init__"
    assert [f"_set_{name}(self, {name})" for name in names] == [
        line.strip() for line in source.splitlines()[1:]
    ]
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.__setattr__(names[0], None)


def test_an_event_keeps_its_defaults_and_signature() -> None:
    assert str(inspect.signature(ToolEnd)) == (  # the dataclass's, annotations and all
        "(tool_id: 'str', success: 'bool', output: 'str | None' = None, "
        "error: 'str | None' = None, detail: 'ErrorDetail | None' = None) -> None"
    )
    assert ToolStart("t", "n") == ToolStart("t", "n", None)
    assert Error(rc.ErrorDetail.create("unknown", "m")).severity == "error"
    assert TurnEnd().usage is None
    with pytest.raises(TypeError, match="success"):
        ToolEnd("t")  # type: ignore[call-arg]
