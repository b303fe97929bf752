"""Frozen slotted value classes without `dataclasses`: what the run path's values are made with.

`import dataclasses` imports `inspect` (~13 ms of a ~10 ms Python start), and each
`@dataclass` compiles four to six functions with `exec`: on the path of `recoverable run`
that was a good part of what the command adds over the CLI it runs. `value_class` makes the
same class a `@dataclass(frozen=True, slots=True)` would, from the same annotations and
defaults: the same `__init__` (generated, one slot store per field: `generated.generate`),
`__eq__`, `__hash__`, `__repr__`, `__match_args__`, frozen `__setattr__` / `__delattr__`
(raising `dataclasses.FrozenInstanceError`, imported then), and the same pickled state (a
list of the field values, so pickles of the dataclass load). `dataclasses.fields`,
`replace`, `asdict` and `is_dataclass` still work on it: its `__dataclass_fields__` is built
(importing `dataclasses`) the first time something asks for it. The run path itself reads
`field_names` and `replace` here, which need nothing.
"""

from __future__ import annotations

import _thread
from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform, overload

from .generated import generate

__all__ = ["field_names", "replace", "value_class", "value_field"]

_Class = TypeVar("_Class", bound=type)
_T = TypeVar("_T")

_NAMES = "__value_fields__"  # the class attribute holding the field names, in order
_REPR = "__value_repr__"  # ... and those `repr` shows


class _Sentinel:
    """A marker value named by its repr (dataclasses' `MISSING` and `<factory>`, without
    importing them)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


_MISSING: Any = _Sentinel("MISSING")  # no default
_FACTORY: Any = _Sentinel("<factory>")  # the default of a field made by its factory


class _Field:
    """What `value_field` says of one field: its default or factory, whether repr shows it."""

    __slots__ = ("annotation", "default", "factory", "repr")

    def __init__(self, default: Any, factory: Any, repr: bool) -> None:
        self.default, self.factory, self.repr = default, factory, repr
        self.annotation: object = None  # the class's, set as the class is made


@overload
def value_field(*, default: _T, repr: bool = True) -> _T: ...
@overload
def value_field(*, default_factory: Callable[[], _T], repr: bool = True) -> _T: ...
def value_field(
    *,
    default: Any = _MISSING,
    default_factory: Any = _MISSING,
    repr: bool = True,
) -> Any:
    """A field with a factory (a fresh value per instance) or kept out of `repr`: the part of
    `dataclasses.field` the value classes use."""
    return _Field(default, default_factory, repr)


def field_names(kind: type) -> tuple[str, ...]:
    """The fields of a value class, in order (`dataclasses.fields`'s names)."""
    names: tuple[str, ...] = getattr(kind, _NAMES)
    return names


def replace(value: _T, /, **changes: Any) -> _T:
    """A copy of `value` with `changes` (`dataclasses.replace`, for a value class)."""
    kind = type(value)
    for name in field_names(kind):
        if name not in changes:
            changes[name] = getattr(value, name)
    made: _T = kind(**changes)
    return made


# --- the methods every value class shares, reading its field names ------------------------


def _values(value: Any) -> tuple[Any, ...]:
    return tuple([getattr(value, name) for name in getattr(type(value), _NAMES)])


def _eq(self: Any, other: object) -> bool:
    if other.__class__ is self.__class__:
        return _values(self) == _values(other)
    return NotImplemented  # type: ignore[no-any-return]


def _hash(self: Any) -> int:
    return hash(_values(self))


_repr_running: set[tuple[int, int]] = set()  # (id, thread): a value in its own repr shows "..."


def _repr(self: Any) -> str:
    key = (id(self), _thread.get_ident())
    if key in _repr_running:
        return "..."
    _repr_running.add(key)
    try:
        kind = type(self)
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in getattr(kind, _REPR))
        return f"{kind.__qualname__}({shown})"
    finally:
        _repr_running.discard(key)


def _frozen(self: Any, name: str, action: str) -> None:
    from dataclasses import FrozenInstanceError  # a mistake: the import costs nothing on a run

    raise FrozenInstanceError(f"cannot {action} field {name!r}")


def _setattr(self: Any, name: str, value: object) -> None:
    _frozen(self, name, "assign to")


def _delattr(self: Any, name: str) -> None:
    _frozen(self, name, "delete")


def _getstate(self: Any) -> list[Any]:
    return list(_values(self))  # dataclasses' own state: pickles of either load in the other


def _setstate(self: Any, state: list[Any]) -> None:
    for name, value in zip(getattr(type(self), _NAMES), state, strict=False):
        object.__setattr__(self, name, value)


class _DataclassFields:
    """`__dataclass_fields__`, built on first use: `dataclasses.fields`, `replace`, `asdict`
    and `is_dataclass` read it; building it imports `dataclasses`, which the run path never
    does."""

    def __get__(self, instance: object, owner: type) -> dict[str, Any]:
        import dataclasses

        made: dict[str, Any] = {}
        specs: dict[str, _Field] = getattr(owner, "__value_specs__")  # noqa: B009
        for name, spec in specs.items():
            item: Any = dataclasses.field(
                default=dataclasses.MISSING if spec.default is _MISSING else spec.default,
                default_factory=dataclasses.MISSING if spec.factory is _MISSING else spec.factory,
                repr=spec.repr,
            )
            item.name, item.type = name, spec.annotation
            item._field_type = dataclasses._FIELD  # type: ignore[attr-defined]
            made[name] = item
        type.__setattr__(owner, "__dataclass_fields__", made)  # once per class
        return made


def _is_class_var(annotation: object) -> bool:
    text = annotation if isinstance(annotation, str) else repr(annotation)
    return text.startswith(("ClassVar", "typing.ClassVar"))


@dataclass_transform(frozen_default=True, field_specifiers=(value_field,))
def value_class(kind: _Class) -> _Class:
    """The class `@dataclass(frozen=True, slots=True)` makes of `kind` (see the module's
    docstring), without `dataclasses`."""
    namespace = dict(kind.__dict__)
    specs: dict[str, _Field] = {}
    for name, annotation in namespace.get("__annotations__", {}).items():
        if _is_class_var(annotation):
            continue
        given = namespace.pop(name, _MISSING)
        spec = given if isinstance(given, _Field) else _Field(given, _MISSING, True)
        spec.annotation = annotation
        specs[name] = spec
    names = tuple(specs)
    namespace.pop("__dict__", None)
    namespace.pop("__weakref__", None)
    namespace.update(
        __slots__=names,
        __match_args__=names,
        __value_fields__=names,
        __value_specs__=specs,
        __value_repr__=tuple(name for name, spec in specs.items() if spec.repr),
        __dataclass_fields__=_DataclassFields(),
        __eq__=_eq,
        __hash__=_hash,
        __repr__=_repr,
        __setattr__=_setattr,
        __delattr__=_delattr,
        __getstate__=_getstate,
        __setstate__=_setstate,
    )
    made: _Class = type(kind)(kind.__name__, kind.__bases__, namespace)
    made.__qualname__ = kind.__qualname__
    made.__init__ = _init(made, specs)  # type: ignore[misc]
    return made


def _init(made: type, specs: dict[str, _Field]) -> Callable[..., None]:
    """`__init__`, one slot store per field through its descriptor (about half what
    dataclasses' costs: it goes through `object.__setattr__` by name)."""
    namespace: dict[str, Any] = {"__name__": made.__module__}
    parameters, lines = [], []
    for name, spec in specs.items():
        namespace[f"_set_{name}"] = vars(made)[name].__set__
        if spec.factory is not _MISSING:
            namespace[f"_factory_{name}"] = spec.factory
            namespace["_FACTORY"] = _FACTORY
            parameters.append(f"{name}=_FACTORY")
            made_here = f"_factory_{name}() if {name} is _FACTORY else {name}"
            lines.append(f"    _set_{name}(self, {made_here})\n")
        elif spec.default is not _MISSING:
            namespace[f"_default_{name}"] = spec.default
            parameters.append(f"{name}=_default_{name}")
            lines.append(f"    _set_{name}(self, {name})\n")
        else:
            parameters.append(name)
            lines.append(f"    _set_{name}(self, {name})\n")
    source = f"def __init__(self, {', '.join(parameters)}):\n{''.join(lines)}"
    function = generate(f"{made.__qualname__}.__init__", source, namespace)
    # The dataclass's signature: its annotations (the class's own, strings here) and `-> None`.
    function.__annotations__ = {name: spec.annotation for name, spec in specs.items()}
    function.__annotations__["return"] = None
    return function
