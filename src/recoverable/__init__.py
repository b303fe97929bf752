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

import importlib

from ._core import __version__
from ._core.config import CONFIG as _CONFIG

# Not `typing.TYPE_CHECKING`: importing typing alone would double the import time.
TYPE_CHECKING = False

# public name -> the private module that defines it
_EXPORTS = {
    "Code": "._core.codes",
    "CodeRegistry": "._core.codes",
    "FixCommandRejected": "._core.codes",
    "codes": "._core.codes",
    "register_code": "._core.codes",
    "ErrorDetail": "._core.detail",
    "PayloadError": "._core.detail",
    "RecoverableError": "._core.error",
    "Stage": "._classify",
    "add_classifier": "._classify",
    "add_secret_pattern": "._core.secrets",
    "scrub": "._core.secrets",
    "classify": "._classify",
    "classify_known": "._classify",
    "classify_response": "._classify",
    "from_http": "._classify",
    "retry_after_ms": "._classify",
    "Answer": "._retry.fallback",
    "BreakerPolicy": ".fleet._rules",
    "Cooldowns": ".fleet._cooldowns",
    "FleetPolicy": ".fleet._rules",
    "RetryPolicy": "._retry.policy",
    "Retrying": "._retry.loop",
    "afallback": "._retry.fallback",
    "fallback": "._retry.fallback",
    "retry": "._retry.loop",
    "set_testing": "._retry.waits",
    "without_sdk_retries": "._retry.sdk_retries",
    "FailureEvent": "._core.failures",
    "get_failure_hooks": "._core.failures",
    "set_failure_hooks": "._core.failures",
    "retry_if_retryable": "._retry.adapters",
    "stamina_on": "._retry.adapters",
    "wait_retry_after": "._retry.adapters",
    "Envelope": "._core.envelope",
    "code_from_envelope": "._core.envelope",
    "envelope_code": "._core.envelope",
    "Action": ".tools._ladder",
    "next_action": ".tools._ladder",
    "from_process": "._classify.process_exit",
    "FixRun": ".tools._recover",
    "Recovery": ".tools._recover",
    "recover": ".tools._recover",
    "run_fix": ".tools._recover",
}

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
    from ._core.detail import ErrorDetail, PayloadError
    from ._core.envelope import Envelope, code_from_envelope, envelope_code
    from ._core.error import RecoverableError
    from ._core.events import RunResult
    from ._core.failures import FailureEvent, get_failure_hooks, set_failure_hooks
    from ._core.secrets import add_secret_pattern, scrub
    from ._retry.adapters import retry_if_retryable, stamina_on, wait_retry_after
    from ._retry.fallback import Answer, afallback, fallback
    from ._retry.loop import Retrying, retry
    from ._retry.policy import RetryPolicy
    from ._retry.sdk_retries import without_sdk_retries
    from ._retry.waits import set_testing
    from .fleet._cooldowns import Cooldowns
    from .fleet._rules import BreakerPolicy, FleetPolicy
    from .tools._ladder import Action, next_action
    from .tools._recover import FixRun, Recovery, recover, run_fix


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'recoverable' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


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
