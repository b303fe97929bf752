"""Generated code: a speed mechanism of the library, compiled once and visible in tracebacks.

A few hot paths are written out from the data they follow rather than by hand: a detail is
built (or copied, from a memo) on every classification by plain slot stores, one per field of
`ErrorDetail`, written from `dataclasses.fields` (`detail`); the scrubber is one function of
plain `if`s written from its table (`secrets`). (The other speed mechanism: memos of what
texts and bodies decide, `secrets.ScrubbedMemo`, forgotten with the scrubber's own memo.)
Both are Python source, compiled here (as attrs compiles its `__init__`s) under a file name of
their own, `<recoverable generated NAME>`, whose text is put in `linecache`: a traceback
through a generated function shows its lines, and
`inspect.getsource` finds them.
"""

from __future__ import annotations

import linecache
from collections.abc import Callable
from typing import Any

__all__ = ["filename_of", "generate"]


def filename_of(name: str) -> str:
    """The file name generated code named `name` is compiled under (before it is taken)."""
    return f"<recoverable generated {name}>"


def generate(name: str, source: str, namespace: dict[str, Any]) -> Callable[..., Any]:
    """The function `source` defines, compiled with `namespace` as its globals.

    `name` is the function's (qualified) name, `TextDelta.__init__`: the function `source`
    defines is its last part, and it takes `name` as its `__qualname__`. The text is kept in
    `linecache` under `<recoverable generated NAME>` (`-2`, `-3`, ... when that name already
    holds another text), so tracebacks and `inspect` read the lines that ran.
    """
    lines = source.splitlines(keepends=True)
    filename, number = filename_of(name), 1
    while True:
        entry = (len(source), None, lines, filename)  # no mtime: `checkcache` keeps it
        if linecache.cache.setdefault(filename, entry) == entry:
            break
        number += 1
        filename = filename_of(f"{name}-{number}")
    exec(compile(source, filename, "exec"), namespace)  # our own source, from our own tables
    function: Callable[..., Any] = namespace[name.rpartition(".")[2]]
    function.__qualname__ = name
    return function
