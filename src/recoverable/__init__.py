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

# Not `typing.TYPE_CHECKING`: importing typing alone would double the import time.
TYPE_CHECKING = False

__version__ = "0.1.0"
"""The installed version."""

# public name -> the private module that defines it
_EXPORTS = {
    "Code": "._codes",
    "CodeRegistry": "._codes",
    "FixCommandRejected": "._codes",
    "codes": "._codes",
    "register_code": "._codes",
    "ErrorDetail": "._detail",
    "PayloadError": "._detail",
    "RecoverableError": "._detail",
    "Stage": "._classify",
    "add_classifier": "._classify",
    "add_secret_pattern": "._secrets",
    "scrub": "._secrets",
    "classify": "._classify",
    "classify_known": "._classify",
    "classify_response": "._classify",
    "from_http": "._classify",
    "retry_after_ms": "._classify",
    "Answer": "._retry",
    "BreakerPolicy": "._cooldown_rules",
    "Cooldowns": "._cooldowns",
    "FleetPolicy": "._cooldown_rules",
    "RetryPolicy": "._policy",
    "Retrying": "._retry",
    "afallback": "._retry",
    "fallback": "._retry",
    "retry": "._retry",
    "set_testing": "._retry",
    "without_sdk_retries": "._sdk_retries",
    "FailureEvent": "._instrumentation",
    "get_failure_hooks": "._instrumentation",
    "set_failure_hooks": "._instrumentation",
    "retry_if_retryable": "._retry_adapters",
    "stamina_on": "._retry_adapters",
    "wait_retry_after": "._retry_adapters",
    "Envelope": "._envelope",
    "code_from_envelope": "._envelope",
    "envelope_code": "._envelope",
    "Action": "._ladder",
    "next_action": "._ladder",
    "from_process": "._process_exit",
    "FixRun": "._recover",
    "Recovery": "._recover",
    "recover": "._recover",
    "run_fix": "._recover",
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
    from ._codes import Code, CodeRegistry, FixCommandRejected, codes, register_code
    from ._cooldown_rules import BreakerPolicy, FleetPolicy
    from ._cooldowns import Cooldowns
    from ._detail import ErrorDetail, PayloadError, RecoverableError
    from ._envelope import Envelope, code_from_envelope, envelope_code
    from ._instrumentation import FailureEvent, get_failure_hooks, set_failure_hooks
    from ._ladder import Action, next_action
    from ._policy import RetryPolicy
    from ._process_exit import from_process
    from ._recover import FixRun, Recovery, recover, run_fix
    from ._retry import Answer, Retrying, afallback, fallback, retry, set_testing
    from ._retry_adapters import retry_if_retryable, stamina_on, wait_retry_after
    from ._sdk_retries import without_sdk_retries
    from ._secrets import add_secret_pattern, scrub


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'recoverable' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
