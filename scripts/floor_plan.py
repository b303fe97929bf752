"""The floor plan's figures (issue 23), from the code: `.venv/bin/python scripts/floor_plan.py`."""

import ast
import io
import re
import subprocess
import sys
import tempfile
import tokenize
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PKG = REPO / "src" / "recoverable"
sys.path[:0] = [str(REPO), str(REPO / "src")]
NAMES = {
    ".".join(p.relative_to(PKG.parent).with_suffix("").parts).removesuffix(".__init__"): p
    for p in sorted(PKG.rglob("*.py"))
}
TREES = {m: ast.parse(p.read_text()) for m, p in NAMES.items()}
LATE = []  # (module, line, imported) of each import inside a function


def imports(m):  # every import of ours, function level too; TYPE_CHECKING blocks aside
    out, pkg = set(), NAMES[m].name == "__init__.py"

    def visit(node, late=False):
        for c in ast.iter_child_nodes(node):
            if isinstance(c, ast.If) and "TYPE_CHECKING" in ast.unparse(c.test):
                continue
            names = [a.name for a in c.names] if isinstance(c, ast.Import) else []
            if isinstance(c, ast.ImportFrom):
                base = m.split(".")[: len(m.split(".")) - c.level + pkg] if c.level else []
                head = ".".join([*base, *filter(None, [c.module])])
                names = [
                    f"{head}.{a.name}" if f"{head}.{a.name}" in NAMES else head for a in c.names
                ]
            for name in names:
                n = name
                while n not in NAMES and "." in n:
                    n = n.rsplit(".", 1)[0]
                if n in NAMES and n != m:
                    out.add(n)
                    if late:
                        LATE.append((m, c.lineno, n))
            visit(c, late or isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef)))

    visit(TREES[m])
    return out


def cycles(edges):  # Tarjan: the strongly connected parts of more than one module
    index, low, stack, found = {}, {}, [], []

    def strong(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = [stack.pop()]
            while part[-1] != v:
                part.append(stack.pop())
            found.append(sorted(part))

    for v in NAMES:
        if v not in index:
            strong(v)
    return sorted((c for c in found if len(c) > 1), key=len, reverse=True)


def table(n):  # a data table: displays of constants and names (and calls of them)
    kids = {
        ast.Starred: lambda: [n.value],
        ast.Call: lambda: [*n.args, *(k.value for k in n.keywords)],
        ast.Dict: lambda: [*n.values, *filter(None, n.keys)],
        ast.BinOp: lambda: [n.left, n.right],
        ast.UnaryOp: lambda: [n.operand],  # -32600
    }
    if isinstance(n, (ast.Constant, ast.Name, ast.Attribute)):
        return True
    if isinstance(n, (ast.Tuple, ast.List, ast.Set)):
        return all(map(table, n.elts))
    return type(n) in kids and all(map(table, kids[type(n)]()))


def main():
    import recoverable
    from recoverable import codes

    found = cycles({m: imports(m) for m in NAMES})
    for c in found:
        print(f"cycle of {len(c)}:", " ".join(x.removeprefix("recoverable.") for x in c))
    inside = [(m, n, t) for m, n, t in sorted(set(LATE)) if any(m in c and t in c for c in found)]
    print(
        f"function-level imports: {len({(m, n) for m, n, _ in LATE})} statements;",
        f"{len({(m, n) for m, n, _ in inside})} of them inside a cycle:",
    )
    for m, n, t in inside:
        print(f"  {NAMES[m].relative_to(REPO)}:{n} -> {t.removeprefix('recoverable.')}")
    print(
        "recoverable.__all__:",
        len(recoverable.__all__),
        "| files at src/recoverable/:",
        len(list(PKG.glob("*.py"))),
    )
    sizes = sorted(((len(p.read_text().splitlines()), m) for m, p in NAMES.items()), reverse=True)[
        :10
    ]
    print("10 largest:", ", ".join(f"{m.removeprefix('recoverable.')} {n}" for n, m in sizes))
    for code in ("import recoverable", "from recoverable import wire; wire.to_sse"):
        probe = f"import sys; b = set(sys.modules)\n{code}\nprint(sorted(set(sys.modules) - b))"
        mods = ast.literal_eval(
            subprocess.run(
                [sys.executable, "-c", probe], capture_output=True, text=True, check=True
            ).stdout.splitlines()[-1]
        )
        heavy = [x for x in mods if x in ("subprocess", "selectors") or ".agents" in x]
        print(
            f"{code}: {sum(x.split('.')[0] == 'recoverable' for x in mods)} ours, {len(mods)} all,",
            f"agents/subprocess/selectors: {len(heavy)}",
        )
    from tests.project.test_import_budget import _loaded  # the budget test's own counting

    for extra in ([], ["--fake"]):
        with tempfile.TemporaryDirectory() as tmp:
            mods = _loaded(Path(tmp), "run", "Say hello", "--cli", "claude", *extra)
        print(
            "recoverable run",
            *extra,
            ":",
            sum(x.split(".")[0] == "recoverable" for x in mods),
            "ours,",
            len(mods),
            "all",
        )
    texts = [p.read_text() for p in NAMES.values()]
    print(
        "global statements:",
        sum(len(re.findall(r"^\s*global ", t, re.M)) for t in texts),
        "| module __getattr__:",
        sum("\ndef __getattr__(" in t for t in texts),
    )
    data = code = 0
    for m, p in NAMES.items():
        tops = [
            *TREES[m].body,
            *(s for c in TREES[m].body if isinstance(c, ast.ClassDef) for s in c.body),
        ]
        for tok in tokenize.generate_tokens(io.StringIO(p.read_text()).readline):
            if tok.type == tokenize.COMMENT and "fmt: skip" in tok.string:
                on = [s for s in tops if s.lineno <= tok.start[0] <= s.end_lineno]
                ok = (
                    on
                    and isinstance(on[0], (ast.Assign, ast.AnnAssign))
                    and on[0].value
                    and table(on[0].value)
                )
                data, code = data + bool(ok), code + (not ok)
    print(f"fmt: skip on data tables {data}, on code {code}")
    known = {r.code for r in codes}
    hits = [
        m
        for m, t in TREES.items()
        for c in ast.walk(t)
        if isinstance(c, ast.Constant) and c.value in known
    ]
    print(
        f"string literals naming one of the {len(known)} codes:",
        f"{len(hits)} in {len(set(hits))} modules",
    )


if __name__ == "__main__":
    main()
