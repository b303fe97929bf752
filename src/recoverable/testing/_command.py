"""`recoverable fake-provider`: print a FakeProvider's base URL, serve until Ctrl-C or SIGTERM."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from typing import Any

from ..cli import UsageParser, count_argument
from ._faults import FAULT_NAMES, Fault, Reply
from ._server import LOOPBACK_HOSTS, FakeProvider


def _port(text: str) -> int:
    """A TCP port number, 0-65535; argparse shows the error as a usage message."""
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port number 0-65535, got {text!r}")
    return port


def _parser() -> argparse.ArgumentParser:
    """The command line: --host, --port, --fault (repeatable), --times, --reply."""
    parser = UsageParser(
        prog="recoverable fake-provider",
        description="Fault-injecting fake LLM provider (Anthropic, OpenAI, Gemini) on loopback.",
    )
    parser.add_argument("--host", default="127.0.0.1", choices=LOOPBACK_HOSTS)
    parser.add_argument("--port", type=_port, default=0, help="0 (default): a free port")
    parser.add_argument(
        "--fault",
        action="append",
        default=[],
        choices=FAULT_NAMES,
        metavar="NAME",
        help=f"queue a fault with default arguments (repeatable): {', '.join(FAULT_NAMES)}",
    )
    parser.add_argument(
        "--times",
        type=count_argument,
        default=0,
        metavar="N",
        help="each --fault fails the next N requests, in turn; 0 (the default): every request"
        " from then on (a later --fault is never reached), as `recoverable run --fake --times`",
    )
    parser.add_argument("--reply", default=None, metavar="TEXT", help="the text of normal replies")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the fake provider until interrupted; returns the exit code."""
    args = _parser().parse_args(argv)
    times = None if args.times == 0 else args.times
    faults = [(Fault.named(name), times) for name in args.fault]
    reply = Reply.text(args.reply) if args.reply is not None else None
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)

    stop = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        """SIGTERM: stop serving like Ctrl-C does."""
        stop.set()

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, on_signal)
    try:
        fake = FakeProvider(faults=faults, reply=reply, host=args.host, port=args.port)
        with fake:
            print(fake.url, flush=True)
            print(
                f"OpenAI base_url: {fake.openai_url}  (Ctrl-C to stop)", file=sys.stderr, flush=True
            )
            while not stop.wait(0.2):
                pass
    except KeyboardInterrupt:
        pass
    except OSError as exc:  # e.g. the port is taken
        print(f"cannot serve: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
