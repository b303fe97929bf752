"""A griffe extension: the API reference shows a value class's constructor as a dataclass's.

`recoverable._core.values.value_class` makes the class `@dataclass(frozen=True, slots=True)`
would, without importing `dataclasses`; griffe reads the source and knows only
`dataclasses.dataclass`. For each class so decorated this writes the `__init__` its fields
make, in order: each annotated attribute that is not a `ClassVar`, with its annotation and
its default (`value_field(default=...)`'s, or a call of its `default_factory`).
mkdocs.yml loads it (`extensions:`).
"""

from __future__ import annotations

from typing import Any

import griffe

_MAKER = "recoverable._core.values.value_class"
_FIELD = "recoverable._core.values.value_field"


class ValueClasses(griffe.Extension):
    """Gives every `@value_class` its dataclass-like `__init__`."""

    def on_class(self, *, cls: griffe.Class, **kwargs: Any) -> None:
        """A loaded class: a value class without an `__init__` gets one."""
        if "__init__" in cls.members or not any(_is_maker(d.value) for d in cls.decorators):
            return
        parameters = [griffe.Parameter("self", kind=griffe.ParameterKind.positional_or_keyword)]
        for member in cls.members.values():
            if not isinstance(member, griffe.Attribute) or member.annotation is None:
                continue
            if "class-attribute" in member.labels and "instance-attribute" not in member.labels:
                continue  # a ClassVar (griffe unwraps the annotation, keeps the label)
            parameters.append(
                griffe.Parameter(
                    member.name,
                    annotation=member.annotation,
                    kind=griffe.ParameterKind.positional_or_keyword,
                    default=_default(member.value),
                    docstring=member.docstring,
                )
            )
        init = griffe.Function(
            "__init__",
            lineno=0,
            endlineno=0,
            parent=cls,
            parameters=griffe.Parameters(*parameters),
            returns="None",
        )
        cls.set_member("__init__", init)


def _is_maker(value: object) -> bool:
    return isinstance(value, griffe.Expr) and value.canonical_path == _MAKER


def _default(value: str | griffe.Expr | None) -> str | griffe.Expr | None:
    """An attribute's value as the parameter's default: a `value_field(...)` call's own."""
    if not isinstance(value, griffe.ExprCall) or value.function.canonical_path != _FIELD:
        return value
    for argument in value.arguments:
        if isinstance(argument, griffe.ExprKeyword) and argument.name == "default":
            return argument.value
        if isinstance(argument, griffe.ExprKeyword) and argument.name == "default_factory":
            return griffe.ExprCall(function=argument.value, arguments=[])
    return None
