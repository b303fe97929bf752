"""A typer tool whose registered fix does not help: `run` always fails with
`stubborn_cache_stale`, and its fix_command (`refresh`) exits 0 without changing anything.
`recoverable exec --allow-fix 'python tests/tools/stubborn_tool.py refresh'` must run
the fix once, see the same code come back, and stop.

    python tests/tools/stubborn_tool.py run          # exit 4, STUBBORN_CACHE_STALE
    python tests/tools/stubborn_tool.py refresh      # exit 0, changes nothing
    python tests/tools/stubborn_tool.py echo 3       # {"n": 3}
"""

from __future__ import annotations

import recoverable as rc
from recoverable.tools import toolkit

CODES = ("stubborn_cache_stale",)

rc.register_code(
    "stubborn_cache_stale",
    category="stubborn",
    exit_code=4,
    user_message="The cache is out of date.",
    fix_required="Refresh the cache",
    fix_command="python tests/tools/stubborn_tool.py refresh",
    fix_contract="idempotent",
    replace=True,
)

app = toolkit.typer_app(json_when_piped=True)


@app.command()
def run() -> None:
    """Fail, every time, with a fixable code."""
    raise rc.RecoverableError("stubborn_cache_stale", "the cache is stale")


@app.command()
def refresh() -> dict[str, bool]:
    """The registered fix: exits 0 and changes nothing."""
    return {"refreshed": False}


@app.command()
def echo(n: int, shout: bool = False) -> dict[str, int | bool]:
    """Answer with what it was given."""
    return {"n": n, "shout": shout}


if __name__ == "__main__":
    app()
