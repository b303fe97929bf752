"""The floor plan's rules a reader relies on, held by a test (CONTRIBUTING.md, Rules).

No module over 500 lines; no `global` statement (process-wide state lives on
`_core.config.CONFIG`); `# fmt: skip` only on a data table; a package face's `__getattr__` is
one delegation to the export helper (`_core.exports`), never a machine of its own.
"""

from __future__ import annotations

import ast
import importlib
import io
import re
import tokenize
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "recoverable"
FILES = sorted(SRC.rglob("*.py"))
MAX_LINES = 500


def _name(path: Path) -> str:
    return path.relative_to(SRC.parent).as_posix()


def test_no_module_is_over_500_lines() -> None:
    sizes = {_name(path): len(path.read_text().splitlines()) for path in FILES}
    assert {name: n for name, n in sizes.items() if n > MAX_LINES} == {}


def test_no_global_statement() -> None:
    found = [
        f"{_name(path)}:{node.lineno}"
        for path in FILES
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Global)
    ]
    assert found == []


# The parts of a node a table may hold: displays, calls of names, signs, `*rest`.
_PARTS: dict[type[ast.AST], Callable[[Any], Sequence[ast.AST]]] = {
    ast.Tuple: lambda n: n.elts,
    ast.List: lambda n: n.elts,
    ast.Set: lambda n: n.elts,
    ast.Dict: lambda n: [*n.values, *filter(None, n.keys)],
    ast.Call: lambda n: [n.func, *n.args, *(k.value for k in n.keywords)],
    ast.UnaryOp: lambda n: [n.operand],
    ast.BinOp: lambda n: [n.left, n.right],
    ast.Starred: lambda n: [n.value],
}


def is_table(node: ast.AST) -> bool:
    """A data table: a display of constants and names, nested (calls of names included, as
    `re.compile("...")` or `frozenset({...})` in a row)."""
    if isinstance(node, (ast.Constant, ast.Name, ast.Attribute)):
        return True
    parts = _PARTS.get(type(node))
    return parts is not None and all(map(is_table, parts(node)))


def skips_on_code(source: str) -> list[int]:
    """The lines of `# fmt: skip` comments not on an assignment of a data table."""
    tree = ast.parse(source)
    tops = [
        *tree.body,
        *(child for node in tree.body if isinstance(node, ast.ClassDef) for child in node.body),
    ]
    found = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.COMMENT or "fmt: skip" not in token.string:
            continue
        line = token.start[0]
        owner = [s for s in tops if s.lineno <= line <= (s.end_lineno or s.lineno)]
        statement = owner[-1] if owner else None  # the innermost: a class's row
        value = statement.value if isinstance(statement, (ast.Assign, ast.AnnAssign)) else None
        if value is None or not is_table(value):
            found.append(line)
    return found


def test_fmt_skip_only_on_data_tables() -> None:
    found = {_name(path): skips_on_code(path.read_text()) for path in FILES}
    assert {name: lines for name, lines in found.items() if lines} == {}


def test_a_face_delegates_its_getattr() -> None:
    machines = []
    for path in FILES:
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef) and node.name == "__getattr__":
                body = [s for s in node.body if not isinstance(s, ast.Expr)]  # a docstring
                if len(body) != 1 or not isinstance(body[0], ast.Return):
                    machines.append(f"{_name(path)}:{node.lineno}")
    assert machines == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('ROWS = (\n    ("a", 1),\n)  # fmt: skip\n', []),
        ('TABLE = {"a": re.compile("x")}  # fmt: skip\n', []),
        ("def f():\n    return g(1,\n      2)  # fmt: skip\n", [3]),
        ("x = [n for n in y]  # fmt: skip\n", [1]),
        ('class C:\n    ROWS = ("a", "b")  # fmt: skip\n', []),
    ],
)
def test_the_skip_rule_tells_a_table_from_code(source: str, expected: list[int]) -> None:
    assert skips_on_code(source) == expected


def test_no_submodule_is_named_like_a_name_its_face_exports() -> None:
    # Importing `pkg.name` binds the attribute `pkg.name` to that module, over the face's
    # `name`: `rc.fallback` would be a module, not the function.
    shadowed = []
    for init in sorted(SRC.rglob("__init__.py")):
        package = ".".join(init.parent.relative_to(SRC.parent).parts)
        exported = getattr(importlib.import_module(package), "__all__", [])
        children = {path.stem for path in init.parent.glob("*.py")} | {
            path.name for path in init.parent.iterdir() if (path / "__init__.py").exists()
        }
        shadowed += [f"{package}.{name}" for name in exported if name in children]
    assert shadowed == []


def test_contributing_maps_every_module_and_only_those() -> None:
    text = (SRC.parent.parent / "CONTRIBUTING.md").read_text()
    section = text[text.index("## The map") : text.index("## Rules the code keeps")]
    mapped = set(re.findall(r"^\| `([\w/]+\.py)` \|", section, re.M))
    assert mapped == {path.relative_to(SRC).as_posix() for path in FILES}


def test_every_module_says_what_it_holds_in_its_docstring() -> None:
    # The map above is read from these first sentences; a module without one is unexplained.
    bare = [
        path.relative_to(SRC).as_posix()
        for path in FILES
        if not (ast.get_docstring(ast.parse(path.read_text())) or "").strip()
    ]
    assert bare == []
