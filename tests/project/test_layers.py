"""The floor plan as a test: the layers of CONTRIBUTING.md hold over every import of ours.

Every `import` and `from ... import` in `src/recoverable`, at any depth (module level, inside a
function, in a `TYPE_CHECKING` block), every module a package face names as a string (its
export table, `import_module`) counts. The contract is `[tool.importlinter]` in pyproject.toml
(import-linter's `layers` shape, so `lint-imports` can give a second opinion) and the same
block in CONTRIBUTING.md. No exceptions are listed: a lower layer that needs a higher one has
it bound from above (`recoverable._core.config`).
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src"
PACKAGE = SRC / "recoverable"


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _resolved(module: str, is_package: bool, level: int, name: str) -> str:
    """`name` at `level` dots from `module`, as an absolute module name."""
    if not level:
        return name
    parts = module.split(".") if is_package else module.split(".")[:-1]
    base = parts[: len(parts) - level + 1]
    return ".".join([*base, *filter(None, [name])])


def _ours(name: str) -> str | None:
    """The module of ours `name` is or is inside (`recoverable.x.attr` -> `recoverable.x`)."""
    while name not in MODULES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name if name in MODULES else None


def imports_of(module: str, source: str, is_package: bool, *, types: bool = True) -> set[str]:
    """Every module of ours `source` imports, at any depth, with the faces' string tables;
    `types=False` leaves out the imports of `TYPE_CHECKING` blocks (they run never)."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if not types and isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return
        found.update(filter(None, map(_ours, _named(module, node, is_package))))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(source))
    found.discard(module)
    return found


def _named(module: str, node: ast.AST, is_package: bool) -> list[str]:
    """The modules one node names: an import, or a module string (a face's export table,
    the first argument of `import_module`)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        head = _resolved(module, is_package, node.level, node.module or "")
        submodules = [f"{head}.{alias.name}" for alias in node.names]
        names = [name for name in submodules if name in MODULES]
        return names if len(names) == len(submodules) else [*names, head]
    strings: list[object] = []
    if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("import_module"):
        strings = [arg.value for arg in node.args[:1] if isinstance(arg, ast.Constant)]
    elif isinstance(node, ast.Dict) and is_package:
        strings = [value.value for value in node.values if isinstance(value, ast.Constant)]
    return [
        name
        for text in strings
        if isinstance(text, str)
        for name in _module_strings(module, text, is_package)
        if name in MODULES
    ]


def _module_strings(module: str, text: str, is_package: bool) -> list[str]:
    """A face's relative module string (".._core.detail") or an absolute "recoverable.x"."""
    if re.fullmatch(r"\.+[A-Za-z_][\w.]*", text):
        level = len(text) - len(text.lstrip("."))
        return [_resolved(module, is_package, level, text[level:])]
    if re.fullmatch(r"recoverable(\.[A-Za-z_]\w*)+", text):
        return [text]
    return []


GRAPH = {
    module: imports_of(module, path.read_text(), path.name == "__init__.py")
    for module, path in MODULES.items()
}
# What runs: a cycle of type-only imports loads nothing twice (the layers still count them).
RUNTIME_GRAPH = {
    module: imports_of(module, path.read_text(), path.name == "__init__.py", types=False)
    for module, path in MODULES.items()
}


def _contract() -> list[list[str]]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]
    (contract,) = config["contracts"]
    return [[name.strip() for name in layer.split("|")] for layer in contract["layers"]]


LAYERS = _contract()


def layer_of(module: str) -> tuple[int, str] | None:
    """(depth from the top, sibling name) of a module; None for the package face itself."""
    parts = module.split(".")
    if len(parts) == 1:
        return None
    for depth, siblings in enumerate(LAYERS):
        if parts[1] in siblings:
            return depth, parts[1]
    raise AssertionError(f"{module} is in no layer of the contract")


def violations(graph: dict[str, set[str]]) -> list[str]:
    """Each import of a higher layer, or of a sibling in the same layer."""
    found = []
    for module, imported in sorted(graph.items()):
        here = layer_of(module)
        for target in sorted(imported):
            there = layer_of(target)
            if here is None:
                continue  # the package face (the container) may name anything
            if there is None:
                found.append(f"{module} -> {target} (the package face)")
            elif there[0] < here[0]:
                found.append(f"{module} -> {target} (a higher layer)")
            elif there[0] == here[0] and there[1] != here[1]:
                found.append(f"{module} -> {target} (a sibling)")
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected parts of more than one module (Tarjan), largest first."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            part = [stack.pop()]
            while part[-1] != node:
                part.append(stack.pop())
            found.append(sorted(part))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted((part for part in found if len(part) > 1), key=len, reverse=True)


def test_every_module_is_in_one_layer() -> None:
    names = [name for layer in LAYERS for name in layer]
    assert len(names) == len(set(names))
    tops = {module.split(".")[1] for module in MODULES if "." in module}
    assert tops == set(names)


def test_no_module_imports_a_higher_layer_or_a_sibling() -> None:
    assert violations(GRAPH) == []


def test_no_import_cycle_anywhere() -> None:
    assert cycles(RUNTIME_GRAPH) == []


def test_contributing_draws_the_same_layers() -> None:
    text = (REPO / "CONTRIBUTING.md").read_text()
    drawn = re.search(r"```layers\n(.*?)```", text, re.S)
    assert drawn is not None, "CONTRIBUTING.md has no ```layers block"
    rows = [[name.strip() for name in row.split("|")] for row in drawn.group(1).splitlines()]
    assert rows == LAYERS


# -- the scanner sees what it must (so the tests above can fail) ------------------------------

SCANNED = [
    ("from .._core.detail import ErrorDetail\n", "recoverable.wire._http",
     {"recoverable._core.detail"}),
    ("def f():\n    from ..agents import replay\n", "recoverable._classify.process_exit",
     {"recoverable.agents"}),
    ("if TYPE_CHECKING:\n    from ..wire import _http\n", "recoverable._core.events",
     {"recoverable.wire._http"}),
    ("from . import _claude, _codex\n", "recoverable.agents", {"recoverable.agents._claude",
     "recoverable.agents._codex"}),
    ('_EXPORTS = {"Envelope": "._core.envelope"}\n', "recoverable", {"recoverable._core.envelope"}),
    ('importlib.import_module("recoverable.tools._exec")\n', "recoverable.command._cli",
     {"recoverable.tools._exec"}),
    ("import recoverable.testing._faults\n", "recoverable.command._cli",
     {"recoverable.testing._faults"}),
]  # fmt: skip


@pytest.mark.parametrize(("source", "module", "expected"), SCANNED)
def test_the_scanner_sees_every_form(source: str, module: str, expected: set[str]) -> None:
    assert imports_of(module, source, module.count(".") == 0 or module == "recoverable.agents") == (
        expected
    )


def test_an_upward_import_and_a_cycle_are_found() -> None:
    planted = {
        "recoverable._core.detail": {"recoverable.agents._replay"},
        "recoverable.agents._replay": {"recoverable._core.detail"},
    }
    assert violations(planted) == [
        "recoverable._core.detail -> recoverable.agents._replay (a higher layer)"
    ]
    assert cycles({**{m: set() for m in planted}, **planted}) == [
        ["recoverable._core.detail", "recoverable.agents._replay"]
    ]
