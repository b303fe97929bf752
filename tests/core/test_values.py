"""The value classes (`_core.values.value_class`) behave as the frozen slotted dataclasses they
were: for each one, a real `@dataclass(frozen=True, slots=True)` with the same fields is
drawn against it (eq, hash, repr, pickled state, copy, match, frozen, signature, replace)."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recoverable._core import events
from recoverable._core.values import field_names, replace, value_class, value_field
from recoverable.agents._cooldown_gate import CliGate
from recoverable.agents._options import RunOptions
from recoverable.command._output import Deadlines

CONVERTED: list[type] = [
    events.TextDelta,
    events.ThinkingDelta,
    events.ToolStart,
    events.ToolEnd,
    events.TurnEnd,
    events.ErrorEvent,
    events.Raw,
    events.RunResult,
    events.Done,
    RunOptions,
    CliGate,
    Deadlines,
]

VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.text(max_size=3),
    st.tuples(st.integers(0, 2)),
)


def _reference(kind: type) -> type:
    """The dataclass `kind` was: the same fields, defaults and repr flags."""
    specs = [
        (item.name, item.type, dataclasses.field(default=item.default, repr=item.repr))
        if item.default_factory is dataclasses.MISSING
        else (item.name, item.type, dataclasses.field(default_factory=item.default_factory))
        for item in dataclasses.fields(kind)
    ]
    made: type = dataclasses.make_dataclass(kind.__name__, specs, frozen=True, slots=True)
    made.__qualname__ = kind.__qualname__
    return made


REFERENCES = {kind: _reference(kind) for kind in CONVERTED}


@pytest.mark.parametrize("kind", CONVERTED, ids=lambda kind: kind.__name__)
def test_a_value_class_has_the_fields_its_annotations_name(kind: type) -> None:
    annotations = {
        name: text
        for base in reversed(kind.__mro__)
        for name, text in vars(base).get("__annotations__", {}).items()
        if not str(text).startswith("ClassVar")
    }
    assert field_names(kind) == tuple(annotations)
    assert kind.__slots__ == field_names(kind)  # type: ignore[attr-defined]
    assert kind.__match_args__ == field_names(kind)  # type: ignore[attr-defined]
    assert str(inspect.signature(kind)) == str(inspect.signature(REFERENCES[kind]))
    assert dataclasses.is_dataclass(kind)
    assert not hasattr(kind(*_required(kind)), "__dict__")


def _required(kind: type) -> list[Any]:
    return [
        "x"
        for item in dataclasses.fields(kind)
        if item.default is dataclasses.MISSING and item.default_factory is dataclasses.MISSING
    ]


@pytest.mark.parametrize("kind", CONVERTED, ids=lambda kind: kind.__name__)
@given(data=st.data())
def test_a_value_class_behaves_as_its_dataclass(kind: type, data: st.DataObject) -> None:
    reference = REFERENCES[kind]
    names = field_names(kind)
    first = [data.draw(VALUES) for _ in names]
    drawn = st.lists(VALUES, min_size=len(names), max_size=len(names))
    second = data.draw(st.one_of(st.just(list(first)), drawn))
    ours, theirs = kind(*first), reference(*first)
    other, their_other = kind(*second), reference(*second)

    assert repr(ours) == repr(theirs)
    assert (ours == other) == (theirs == their_other)
    assert (ours != other) == (theirs != their_other)
    assert ours != theirs  # another class: never equal, as two dataclasses
    assert hash(ours) == hash(theirs)
    assert ours.__getstate__() == theirs.__getstate__()  # type: ignore[attr-defined]
    for again in (pickle.loads(pickle.dumps(ours)), copy.copy(ours), copy.deepcopy(ours)):
        assert type(again) is kind
        assert again == ours
    assert dataclasses.asdict(ours) == dataclasses.asdict(theirs)
    assert dataclasses.astuple(ours) == dataclasses.astuple(theirs)
    changes = {names[0]: second[0]}
    assert replace(ours, **changes) == dataclasses.replace(ours, **changes)
    assert repr(replace(ours, **changes)) == repr(dataclasses.replace(theirs, **changes))
    frozen = dataclasses.FrozenInstanceError
    for value in (ours, theirs):
        with pytest.raises(frozen, match=f"cannot assign to field '{names[0]}'"):
            setattr(value, names[0], None)
        with pytest.raises(frozen, match=f"cannot delete field '{names[0]}'"):
            delattr(value, names[0])
    assert kind.__match_args__ == reference.__match_args__  # type: ignore[attr-defined]


def test_a_value_class_matches_by_position_and_by_name() -> None:
    match events.ToolStart("t1", "Bash"):
        case events.ToolStart(tool, name, input=None):
            assert (tool, name) == ("t1", "Bash")
        case _:
            pytest.fail("no match")


def test_a_pickle_of_the_dataclass_loads_as_the_value_class() -> None:
    # A dataclass pickle is `copyreg.__newobj__(cls)` then `__setstate__(list of fields)`.
    theirs = REFERENCES[events.ToolEnd]("t1", False, "out")
    state = theirs.__getstate__()  # type: ignore[attr-defined]
    ours = events.ToolEnd.__new__(events.ToolEnd)
    ours.__setstate__(state)  # type: ignore[attr-defined]
    assert ours == events.ToolEnd("t1", False, "out")


def test_a_factory_default_is_fresh_per_value_and_repr_can_hide_a_field() -> None:
    @value_class
    class Made:
        shown: int
        kept: dict[str, int] = value_field(default_factory=dict)
        hidden: tuple[int, ...] = value_field(default=(), repr=False)

    assert Made(1).kept is not Made(1).kept
    assert repr(Made(1, {"a": 1}, (2,))) == (
        "test_a_factory_default_is_fresh_per_value_and_repr_can_hide_a_field.<locals>."
        "Made(shown=1, kept={'a': 1})"
    )
    assert str(inspect.signature(Made)) == (
        "(shown: 'int', kept: 'dict[str, int]' = <factory>, hidden: 'tuple[int, ...]' = ()) -> None"
    )


def test_a_value_that_holds_itself_reprs_as_a_dataclass_does() -> None:
    ours, theirs = events.Raw("claude", []), REFERENCES[events.Raw]("claude", [])
    ours.event.append(ours)
    theirs.event.append(theirs)
    assert repr(ours) == repr(theirs) == "Raw(cli='claude', event=[...])"
