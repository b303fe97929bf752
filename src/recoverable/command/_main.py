"""The `recoverable` command's entry: the subcommand is read off argv before anything it does
not run is imported.

`exec` and `run` with plain options (`_plain`) go straight to what runs them
(`recoverable.tools._exec`, `_run`), without argparse; every other command, and those two with
any other word, go through the full parser (`_cli`), which imports only the subcommand it runs.
"""

from __future__ import annotations

import sys

from ._stdout import answered

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns the process exit code."""
    given = list(sys.argv[1:] if argv is None else argv)
    if given[:1] == ["exec"]:
        from ._plain import plain_exec_request

        request = plain_exec_request(given[1:])
        if request is not None:
            from ..tools._exec import exec_command

            return answered(lambda out: exec_command(request, out))
    elif given[:1] == ["run"]:
        from ._plain import plain_run_args

        args = plain_run_args(given[1:])
        if args is not None:
            from ._run import cmd_run

            return answered(lambda out: cmd_run(args, out))
    from ._cli import main as parsed_main

    return parsed_main(given)
