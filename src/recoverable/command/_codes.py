"""`recoverable codes`: the code table as text, Markdown or JSON."""

from __future__ import annotations

import argparse
import json
from typing import Any, TextIO

from .._core.codes import CodeRow, codes

__all__ = ["cmd_codes", "render_codes"]


_COLUMNS = ("code", "category", "retryable", "fallback", "exit", "http", "user message")


def _cells(row: CodeRow) -> tuple[str, ...]:
    return (
        row.code,
        row.category,
        "yes" if row.retryable else "no",
        "yes" if row.fallback else "no",
        str(row.exit_code),
        str(row.http_status),
        row.user_message,
    )


def render_codes(style: str = "text") -> str:
    """The registry as aligned text, a Markdown table or JSON."""
    rows = list(codes)
    if style == "json":
        return json.dumps([_row_dict(row) for row in rows], indent=2)
    cells = [_cells(row) for row in rows]
    if style == "markdown":
        lines = ["| " + " | ".join(_COLUMNS) + " |", "|" + "---|" * len(_COLUMNS)]
        lines += ["| " + " | ".join((f"`{c[0]}`", *c[1:])) + " |" for c in cells]
        return "\n".join(lines)
    widths = [max(len(c[i]) for c in [_COLUMNS, *cells]) for i in range(len(_COLUMNS) - 1)]
    lines = []
    for c in [_COLUMNS, *cells]:
        lines.append("  ".join(v.ljust(w) for v, w in zip(c, widths, strict=False)) + "  " + c[-1])
    return "\n".join(lines)


def _row_dict(row: CodeRow) -> dict[str, Any]:
    return {
        "code": row.code,
        "category": row.category,
        "retryable": row.retryable,
        "fallback": row.fallback,
        "exit_code": row.exit_code,
        "http_status": row.http_status,
        "user_message": row.user_message,
        "fix_required": row.fix_required,
        "fix_commands": dict(row.fix_commands),
        "when": row.when,
    }


def cmd_codes(args: argparse.Namespace, out: TextIO) -> int:
    style = "markdown" if args.markdown else "json" if args.json else "text"
    print(render_codes(style), file=out)
    if style == "markdown":  # what each surface can tell apart, from the matrix test's table
        from ..testing._fault_matrix import render_matrix

        print("\n## Fault matrix\n\n" + render_matrix(), file=out)
    return 0
