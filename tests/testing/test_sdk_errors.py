"""`sdk_error` (testing/_sdk_errors.py) leaves nothing open: a process that keeps the exception
until it exits prints nothing at exit (issue 26)."""

from __future__ import annotations

import subprocess
import sys

import pytest

SDKS = ("openai", "anthropic", "google", "bedrock")
# The faults a streaming call meets mid-stream or before it: every way a stream can end badly.
STREAM_FAULTS = ("stream_overloaded", "cut_stream", "drop", "hang", "rate_limited")

# One exception per process: what the interpreter's exit then finalizes is that one alone.
_KEEP_UNTIL_EXIT = """
import sys
from recoverable.testing import Fault, sdk_error

kept = sdk_error(sys.argv[1], Fault.named(sys.argv[2]), stream=True)
print(type(kept).__name__)
"""


@pytest.mark.parametrize("fault", STREAM_FAULTS)
@pytest.mark.parametrize("sdk", SDKS)
def test_a_streaming_error_kept_until_exit_leaves_nothing_open(sdk: str, fault: str) -> None:
    done = subprocess.run(
        [sys.executable, "-W", "error::ResourceWarning", "-c", _KEEP_UNTIL_EXIT, sdk, fault],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()
    assert done.stderr == ""  # no "Exception ignored in: <generator ...>"


def test_openai_stream_error_is_the_one_the_sdk_raises() -> None:
    import openai

    from recoverable.testing import Fault, sdk_error

    error = sdk_error("openai", Fault.stream_overloaded(), stream=True)
    assert type(error) is openai.APIError
    assert error.__traceback__ is not None  # kept whole: only the generators it held are closed
