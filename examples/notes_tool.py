"""notes: a small agent tool built with recoverable's toolkit (click).

    python examples/notes_tool.py init                 # create the store (safe to run twice)
    python examples/notes_tool.py add "buy milk"       # {"id": 1, "text": "buy milk"}
    python examples/notes_tool.py show 1 --json        # the envelope on stdout

Piped (an agent reading stdout), it answers with the cli-agent-spec envelope without being
asked. Its own codes: `notes_not_initialised` (exit 4, PRECONDITION: its registered
fix_command creates the store; registered in this tool's process, not in `recoverable
exec`'s, so exec runs it only when named: `recoverable exec --allow-fix 'python
examples/notes_tool.py init' -- ...`, then reissues once) and `notes_note_missing` (exit 5,
NOT_FOUND: nothing to fix). The store is the folder $NOTES_HOME (default: ./.notes).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import click

import recoverable as rc
from recoverable.tools import toolkit

# Registered once, checked at registration: one static, safe command, and our word that it
# is idempotent (running it twice is the same as once).
rc.register_code(
    "notes_not_initialised",
    category="notes",
    exit_code=4,
    http_status=409,
    user_message="The notes have not been set up yet.",
    fix_required="Create the notes store",
    fix_command="python examples/notes_tool.py init",
    fix_contract="idempotent",
    when="add, list or show before init",
    replace=True,
)
rc.register_code(
    "notes_note_missing",
    category="notes",
    exit_code=5,
    http_status=404,
    user_message="That note does not exist.",
    when="show with an id no note has",
    replace=True,
)


def _store() -> Path:
    return Path(os.environ.get("NOTES_HOME", ".notes")) / "notes.json"


def _read() -> list[dict[str, Any]]:
    store = _store()
    if not store.exists():
        raise rc.RecoverableError("notes_not_initialised", f"no notes store at {store}")
    notes: list[dict[str, Any]] = json.loads(store.read_text())
    return notes


@toolkit.click_tool_group(json_when_piped=True)
def notes() -> None:
    """Keep short notes."""


@notes.command()
def init() -> dict[str, Any]:
    """Create the notes store (does nothing when it exists)."""
    store = _store()
    created = not store.exists()
    if created:
        store.parent.mkdir(parents=True, exist_ok=True)
        store.write_text("[]")
    return {"store": str(store), "created": created}


@notes.command()
@click.argument("text")
def add(text: str) -> dict[str, Any]:
    """Add a note."""
    saved = _read()
    note = {"id": len(saved) + 1, "text": text}
    _store().write_text(json.dumps([*saved, note]))
    return note


@notes.command()
@click.argument("note_id", type=int)
def show(note_id: int) -> dict[str, Any]:
    """Show one note."""
    for note in _read():
        if note["id"] == note_id:
            return note
    raise rc.RecoverableError("notes_note_missing", f"no note has id {note_id}")


if __name__ == "__main__":
    notes()
