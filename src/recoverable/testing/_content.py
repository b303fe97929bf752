"""A reply's content as the APIs carry it: JSON arguments, stream deltas, token counts."""

from __future__ import annotations

import json
import re

from ._faults import Reply

__all__ = ["arg_pieces", "args_json", "kept_events", "out_tokens", "pieces"]


def pieces(text: str) -> list[str]:
    """Split text into word-sized deltas whose concatenation is the text."""
    parts = re.findall(r"\s*\S+", text)
    tail = text[len("".join(parts)) :]
    if tail:
        if parts:
            parts[-1] += tail
        else:
            parts = [tail]
    return parts


def arg_pieces(arguments: str) -> list[str]:
    """Split a JSON arguments string into a few deltas, as the APIs stream them."""
    size = max(1, -(-len(arguments) // 3))
    return [arguments[i : i + size] for i in range(0, len(arguments), size)] or [""]


def args_json(reply: Reply) -> str:
    """A tool call's arguments as the compact JSON string the APIs send."""
    return json.dumps(dict(reply.tool_arguments), separators=(",", ":"), ensure_ascii=False)


def out_tokens(reply: Reply) -> int:
    """A rough output token count for usage fields."""
    text = reply.content if reply.kind == "text" else args_json(reply)
    return max(1, len(text) // 4)


def kept_events(
    head: list[bytes], deltas: list[bytes], tail: list[bytes], cut: int | None
) -> list[bytes]:
    """A stream's events: all of them, or with `cut`, the head and that many deltas only."""
    if cut is None:
        return [*head, *deltas, *tail]
    return [*head, *deltas[:cut]]
