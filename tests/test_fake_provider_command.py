"""`recoverable fake-provider` (testing/_command.py): serving from a shell, and its checks."""

from __future__ import annotations

import json
import select
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from .provider_support import MSGS, no_proxy_opener


def test_command_serves_until_terminated() -> None:
    # The command as a user types it: its options reach its own parser.
    argv = ["fake-provider", "--fault", "overloaded", "--times", "1", "--reply", "from the cli"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "recoverable", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 15)
        assert ready, "the command printed no URL"
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        body = json.dumps({"model": "m", "max_tokens": 8, "messages": MSGS}).encode()
        headers = {"Content-Type": "application/json"}
        opener = no_proxy_opener()
        with pytest.raises(urllib.error.HTTPError) as info:
            opener.open(urllib.request.Request(url + "/v1/messages", body, headers), timeout=5)
        assert info.value.code == 529
        with opener.open(
            urllib.request.Request(url + "/v1/messages", body, headers), timeout=5
        ) as ok:
            assert json.loads(ok.read())["content"] == [{"type": "text", "text": "from the cli"}]
        proc.terminate()
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.stderr is not None
    log = proc.stderr.read()
    proc.stdout.close()
    proc.stderr.close()
    assert "POST /v1/messages api=anthropic stream=False fault=overloaded" in log


def test_command_rejects_a_public_host() -> None:
    from recoverable.testing._command import main

    with pytest.raises(SystemExit) as info:
        main(["--host", "0.0.0.0"])
    assert info.value.code == 2


@pytest.mark.parametrize("port", ["70000", "-1", "http"])
def test_command_rejects_a_port_out_of_range(port: str, capsys: pytest.CaptureFixture[str]) -> None:
    from recoverable.testing._command import main

    with pytest.raises(SystemExit) as info:
        main(["--port", port])
    assert info.value.code == 2
    assert f"expected a port number 0-65535, got {port!r}" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["--times", "-1"], ["--times", "two"]])
def test_times_is_a_count_in_both_commands(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    from recoverable.cli import main as command
    from recoverable.testing._command import main

    for run in (lambda: main(argv), lambda: command(["run", "hi", "--fake", "overloaded", *argv])):
        with pytest.raises(SystemExit) as info:
            run()
        assert info.value.code == 2
        assert f"expected a whole number >= 0, got {argv[1]!r}" in capsys.readouterr().err


def test_times_defaults_to_every_request_in_both_commands() -> None:
    from recoverable.cli import _parser as command_parser
    from recoverable.testing._command import _parser

    assert _parser().parse_args(["--fault", "overloaded"]).times == 0
    # None: not given (`--times` without `--fake FAULT` is refused), which `run` reads as 0
    assert command_parser().parse_args(["run", "hi", "--fake", "overloaded"]).times is None
