"""Codes are checked names, not strings: mypy sees the built-in ones, a scan sees the rest.

`BuiltinCode` (`recoverable._core.codes`) is a `Literal` of the table's codes, in order, so a
misspelt code where a constructor or a table takes one fails mypy; every internal constructor
refuses an unregistered code at run time. What mypy cannot see (a comparison with
`detail.code`, a code inside a table of pairs), this scan of the source reads: every string in
a code's place names a registered code, and no string anywhere in `src/` is one edit away from
a code without being one.
"""

from __future__ import annotations

import ast
import re
import typing
from collections.abc import Iterator
from pathlib import Path

import pytest

import recoverable as rc
from recoverable._core import code_names
from recoverable._core.detail import unvalidated

SRC = Path(__file__).resolve().parents[2] / "src" / "recoverable"
CODES = [row.code for row in rc.codes]
KNOWN = frozenset(CODES)

# Calls whose first argument (or `code=`) is a code.
CODE_TAKERS = frozenset(
    {"unvalidated", "create", "RecoverableError", "registered", "always", "transport", "row"}
)


def test_the_literal_is_the_table() -> None:
    assert list(typing.get_args(code_names.BuiltinCode)) == CODES


def test_a_misspelt_code_raises_at_run_time() -> None:
    with pytest.raises(ValueError, match="provider_rate_limted"):
        unvalidated("provider_rate_limted", "x")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="provider_rate_limted"):
        rc.ErrorDetail.create("provider_rate_limted", "x")  # type: ignore[arg-type]


def _strings(node: ast.AST) -> Iterator[ast.Constant]:
    """The string constants of a node: itself, or a tuple/list/set display of them."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node
    elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        for element in node.elts:
            yield from _strings(element)


def _named(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def in_code_places(tree: ast.AST) -> Iterator[ast.Constant]:
    """The strings in a code's place: a constructor's code, `codes[...]`, a comparison with an
    attribute named `code`, the values of a table most of whose values are codes."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _named(node.func) in CODE_TAKERS:
            yield from (s for arg in node.args[:1] for s in _strings(arg))
            yield from (s for k in node.keywords if k.arg == "code" for s in _strings(k.value))
        elif isinstance(node, ast.Subscript) and getattr(node.value, "id", "") == "codes":
            yield from _strings(node.slice)
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(isinstance(side, ast.Attribute) and side.attr == "code" for side in sides):
                yield from (s for side in sides for s in _strings(side))
        elif isinstance(node, ast.Dict):
            values = [v for v in node.values if isinstance(v, ast.Constant)]
            named = [v for v in values if v.value in KNOWN]
            if len(values) >= 3 and len(named) * 2 >= len(node.values):
                yield from (v for v in values if isinstance(v.value, str))


# A code's shape: the lower_snake_case `register_code` requires of every code.
_CODE_SHAPE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*")


def one_edit_away(text: str, code: str) -> bool:
    """Whether `text` becomes `code` by one insertion, deletion or substitution."""
    if abs(len(text) - len(code)) > 1 or text == code:
        return False
    if len(text) == len(code):
        return sum(a != b for a, b in zip(text, code, strict=True)) == 1
    short, long = sorted((text, code), key=len)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


def scan(source: str) -> list[str]:
    """What the scan refuses in one module's source: an unregistered code in a code's place,
    and a near miss of a code anywhere."""
    tree = ast.parse(source)
    found = [
        f"{node.lineno}: {node.value!r} names no code"
        for node in in_code_places(tree)
        if node.value not in KNOWN
    ]
    for node in ast.walk(tree):
        # Only a string of a code's own shape can be a misspelt code: a class name
        # (`Timeout`), a status word (`Unknown`) or a phrase (`payment required`) is other text.
        text = node.value if isinstance(node, ast.Constant) else None
        if isinstance(text, str) and _CODE_SHAPE.fullmatch(text):
            near = [code for code in CODES if one_edit_away(text, code)]
            if near:
                found.append(f"{node.lineno}: {text!r} is one edit from {near[0]!r}")
    return found


def test_every_code_in_the_source_is_registered() -> None:
    found = {
        path.relative_to(SRC).as_posix(): scan(path.read_text())
        for path in sorted(SRC.rglob("*.py"))
    }
    assert {name: hits for name, hits in found.items() if hits} == {}


PLANTED = [
    ('unvalidated("provider_rate_limted", "x")\n', ["1: 'provider_rate_limted' names no code",
     "1: 'provider_rate_limted' is one edit from 'provider_rate_limited'"]),
    ('if detail.code == "network_eror":\n    pass\n', ["1: 'network_eror' names no code",
     "1: 'network_eror' is one edit from 'network_error'"]),
    ('codes["timeout_x"]\n', ["1: 'timeout_x' names no code"]),
    ('T = {1: "rate_limited", 2: "unavailable", 3: "not_a_code"}\n',
     ["1: 'not_a_code' names no code"]),
    ('x = "rate_limited"\ny = detail.code in ("unavailable", "conflict")\n', []),
    ('T = ("Timeout", "Unknown", "payment required")\n', []),
    ('x = "network_eror"\n', ["1: 'network_eror' is one edit from 'network_error'"]),
]  # fmt: skip


@pytest.mark.parametrize(("source", "expected"), PLANTED)
def test_the_scan_finds_what_is_planted(source: str, expected: list[str]) -> None:
    assert scan(source) == expected


ROOT = SRC.parent.parent


def test_mypy_refuses_a_misspelt_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The project's own mypy run (its config, its cache: warm after `mypy`) on a call with a
    misspelt code: the error is the argument's type, and it names the literal."""
    from mypy import api

    sample = tmp_path / "misspelt.py"
    sample.write_text(
        "from recoverable._core.detail import unvalidated\n\n"
        'unvalidated("provider_rate_limited", "x")\n'
        'unvalidated("provider_rate_limted", "x")\n'
    )
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("MYPYPATH", str(ROOT / "src"))
    out, err, status = api.run(["--config-file", str(ROOT / "pyproject.toml"), str(sample)])
    errors = [line for line in out.splitlines() if ": error: " in line]
    assert status == 1, (out, err)
    assert len(errors) == 1, out
    # the file's name, not its folder: a cache warmed by another run may name that run's folder
    assert 'misspelt.py:4: error: Argument 1 to "unvalidated"' in errors[0]
    assert "\"Literal['provider_rate_limted']\"" in errors[0]
    assert errors[0].endswith("[arg-type]")
