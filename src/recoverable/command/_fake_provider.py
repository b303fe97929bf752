"""`recoverable fake-provider`: serve a FakeProvider until Ctrl-C or SIGTERM.

Its URL goes to stdout (one line, for a script); each API's base URL, as that API's client
takes it, to stderr (for a person).
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from dataclasses import dataclass
from typing import Any

from ..testing._faults import FAULT_NAMES, Fault, Reply
from ..testing._server import LOOPBACK_HOSTS, FakeProvider
from ._arguments import UsageParser, count_argument


@dataclass(frozen=True, slots=True)
class BaseUrl:
    """Where one provider's client is pointed: the fake's URL and this path."""

    api: str
    """The first wire API of the provider (`RecordedRequest.api` of its requests)."""
    name: str
    path: str
    client: str
    """How its SDK's client takes the URL."""


# One row per provider module (tests/command/test_fake_provider.py holds the rows to
# PROVIDERS, and has each SDK send a request to its row's URL).
BASE_URLS = (
    BaseUrl("anthropic", "Anthropic", "", "anthropic.Anthropic(base_url=URL)"),
    BaseUrl("openai_chat", "OpenAI", "/v1", "openai.OpenAI(base_url=URL)"),
    BaseUrl("gemini", "Gemini", "", "genai.Client(http_options=HttpOptions(base_url=URL))"),
    BaseUrl("bedrock_converse", "Amazon Bedrock", "",
            'boto3.client("bedrock-runtime", endpoint_url=URL)'),
    BaseUrl("azure_chat", "Azure OpenAI", "", "openai.AzureOpenAI(azure_endpoint=URL)"),
    BaseUrl("groq_chat", "Groq", "", "groq.Groq(base_url=URL)"),
    BaseUrl("cohere_chat", "Cohere", "", "cohere.ClientV2(base_url=URL)"),
    BaseUrl("ollama_chat", "Ollama", "", "ollama.Client(host=URL)"),
    BaseUrl("openrouter_chat", "OpenRouter", "/api/v1", "openai.OpenAI(base_url=URL)"),
    BaseUrl("deepseek_chat", "DeepSeek", "", "openai.OpenAI(base_url=URL)"),
    BaseUrl("vllm_chat", "vLLM", "/vllm/v1", "openai.OpenAI(base_url=URL)"),
    BaseUrl("lmstudio_chat", "LM Studio", "/lmstudio/v1", "openai.OpenAI(base_url=URL)"),
)  # fmt: skip


def base_urls_text(url: str) -> str:
    """Each API's base URL under the fake's `url`, aligned, one per line."""
    rows = [(row.name, url + row.path, row.client) for row in BASE_URLS]
    name_width = max(len(name) for name, _, _ in rows)
    url_width = max(len(base) for _, base, _ in rows)
    lines = [f"  {n.ljust(name_width)}  {b.ljust(url_width)}  {c}" for n, b, c in rows]
    return "\n".join(["base URLs (Ctrl-C to stop):", *lines])


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
        description="Serve a fault-injecting fake LLM provider on loopback: "
        f"{', '.join(row.name for row in BASE_URLS)}. Its URL goes to stdout; each API's base "
        "URL, as its client takes it, to stderr.",
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
            print(base_urls_text(fake.url), file=sys.stderr, flush=True)
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
