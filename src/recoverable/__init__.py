"""recoverable: one error model for AI-agent systems.

Every failure becomes an `ErrorDetail` that says what failed (`code`), whether the identical
call is worth repeating (`retryable`, `retry_after_ms`), what must change first
(`fix_required`), the exact command that changes it (`fix_command`) and a sentence safe to
show a person (`user_message`).

    >>> import recoverable as rc
    >>> rc.classify(ConnectionRefusedError()).code
    'network_error'

The public names load on first use, so `import recoverable` costs next to nothing in a
program that never fails; no SDK is ever imported.
"""

from __future__ import annotations

from ._core import __version__
from ._core.config import CONFIG as _CONFIG
from ._core.exports import Face as _Face

# Not `typing.TYPE_CHECKING`: importing typing alone would double the import time.
TYPE_CHECKING = False

__all__ = [
    "Action",
    "Answer",
    "BreakerPolicy",
    "Code",
    "CodeRegistry",
    "Cooldowns",
    "Envelope",
    "ErrorDetail",
    "FailureEvent",
    "FixCommandRejected",
    "FixRun",
    "FleetPolicy",
    "PayloadError",
    "RecoverableError",
    "Recovery",
    "RetryPolicy",
    "Retrying",
    "Stage",
    "__version__",
    "add_classifier",
    "add_secret_pattern",
    "afallback",
    "classify",
    "classify_known",
    "classify_response",
    "code_from_envelope",
    "codes",
    "envelope_code",
    "fallback",
    "from_http",
    "from_process",
    "get_failure_hooks",
    "next_action",
    "recover",
    "register_code",
    "retry",
    "retry_after_ms",
    "retry_if_retryable",
    "run_fix",
    "scrub",
    "set_failure_hooks",
    "set_testing",
    "stamina_on",
    "wait_retry_after",
    "without_sdk_retries",
]

# public name -> the module that defines it (loaded on first use)
_FACE = _Face(
    __name__,
    {
        "Code": "recoverable._core.codes",
        "CodeRegistry": "recoverable._core.codes",
        "FixCommandRejected": "recoverable._core.codes",
        "codes": "recoverable._core.codes",
        "register_code": "recoverable._core.codes",
        "ErrorDetail": "recoverable._core.detail",
        "PayloadError": "recoverable._core.detail",
        "RecoverableError": "recoverable._core.detail",
        "Stage": "recoverable._classify",
        "add_classifier": "recoverable._classify",
        "classify": "recoverable._classify",
        "classify_known": "recoverable._classify",
        "classify_response": "recoverable._classify",
        "from_http": "recoverable._classify",
        "retry_after_ms": "recoverable._classify",
        "from_process": "recoverable._classify.process_exit",
        "add_secret_pattern": "recoverable._core.secrets",
        "scrub": "recoverable._core.secrets",
        "Answer": "recoverable._retry.loop",
        "Retrying": "recoverable._retry.loop",
        "afallback": "recoverable._retry.loop",
        "fallback": "recoverable._retry.loop",
        "retry": "recoverable._retry.loop",
        "set_testing": "recoverable._retry.loop",
        "RetryPolicy": "recoverable._retry.policy",
        "without_sdk_retries": "recoverable._retry.sdk_retries",
        "retry_if_retryable": "recoverable._retry.adapters",
        "stamina_on": "recoverable._retry.adapters",
        "wait_retry_after": "recoverable._retry.adapters",
        "BreakerPolicy": "recoverable.fleet._rules",
        "FleetPolicy": "recoverable.fleet._rules",
        "Cooldowns": "recoverable.fleet._cooldowns",
        "FailureEvent": "recoverable._core.failures",
        "get_failure_hooks": "recoverable._core.failures",
        "set_failure_hooks": "recoverable._core.failures",
        "Envelope": "recoverable._core.envelope",
        "code_from_envelope": "recoverable._core.envelope",
        "envelope_code": "recoverable._core.envelope",
        "Action": "recoverable.tools._ladder",
        "next_action": "recoverable.tools._ladder",
        "FixRun": "recoverable.tools._recover",
        "Recovery": "recoverable.tools._recover",
        "recover": "recoverable.tools._recover",
        "run_fix": "recoverable.tools._recover",
    },
)

if TYPE_CHECKING:
    from ._classify import (
        Stage,
        add_classifier,
        classify,
        classify_known,
        classify_response,
        from_http,
        retry_after_ms,
    )
    from ._classify.process_exit import from_process
    from ._core.codes import Code, CodeRegistry, FixCommandRejected, codes, register_code
    from ._core.detail import ErrorDetail, PayloadError, RecoverableError
    from ._core.envelope import Envelope, code_from_envelope, envelope_code
    from ._core.events import RunResult
    from ._core.failures import FailureEvent, get_failure_hooks, set_failure_hooks
    from ._core.secrets import add_secret_pattern, scrub
    from ._retry.adapters import retry_if_retryable, stamina_on, wait_retry_after
    from ._retry.loop import Answer, Retrying, afallback, fallback, retry, set_testing
    from ._retry.policy import RetryPolicy
    from ._retry.sdk_retries import without_sdk_retries
    from .fleet._cooldowns import Cooldowns
    from .fleet._rules import BreakerPolicy, FleetPolicy
    from .tools._ladder import Action, next_action
    from .tools._recover import FixRun, Recovery, recover, run_fix


def __getattr__(name: str) -> object:
    return _FACE.attribute(name)


def __dir__() -> list[str]:
    return _FACE.names()


def _classify(value: object) -> ErrorDetail:
    from ._classify import classify

    return classify(value)


def _replay_cli(
    cli: str, stdout: str, stderr: str, exit_code: int | None, signal: int | None
) -> RunResult:
    from .agents import replay

    return replay(cli, stdout, stderr, exit_code, signal)


# The lower layers call these through the configuration (see `recoverable._core.config`).
_CONFIG.bind(classify=_classify, replay_cli=_replay_cli)
