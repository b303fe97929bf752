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
    code = (
        "import sys; from recoverable.testing._command import main;"
        " sys.exit(main(['--fault', 'overloaded', '--reply', 'from the cli']))"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
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
