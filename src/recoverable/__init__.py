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
from ._core.exports import install_legacy_paths as _install_legacy_paths

# Not `typing.TYPE_CHECKING`: importing typing alone would double the import time.
TYPE_CHECKING = False

__all__ = [
    "CodeRow",
    "Envelope",
    "ErrorDetail",
    "FallbackResult",
    "PayloadError",
    "RecoverableError",
    "RetryPolicy",
    "Retrying",
    "Stage",
    "__version__",
    "add_classifier",
    "afallback",
    "classify",
    "classify_known",
    "classify_response",
    "codes",
    "fallback",
    "from_http",
    "from_process",
    "next_action",
    "register_code",
    "request_headers",
    "request_key",
    "retry",
    "retry_after_ms",
    "without_sdk_retries",
]

# public name -> the module that defines it (loaded on first use); the public subpackages too
_FACE = _Face(
    __name__,
    {
        "ErrorDetail": "recoverable._core.detail",
        "PayloadError": "recoverable._core.detail",
        "RecoverableError": "recoverable._core.error",
        "Stage": "recoverable._classify",
        "add_classifier": "recoverable._classify",
        "classify": "recoverable._classify",
        "classify_known": "recoverable._classify",
        "classify_response": "recoverable._classify",
        "from_http": "recoverable._classify",
        "retry_after_ms": "recoverable._classify",
        "from_process": "recoverable._classify.process_exit",
        "CodeRow": "recoverable._core.codes",
        "codes": "recoverable._core.codes",
        "register_code": "recoverable._core.codes",
        "FallbackResult": "recoverable._retry",
        "RetryPolicy": "recoverable._retry",
        "Retrying": "recoverable._retry",
        "afallback": "recoverable._retry",
        "fallback": "recoverable._retry",
        "retry": "recoverable._retry",
        "request_headers": "recoverable._retry",
        "request_key": "recoverable._retry",
        "without_sdk_retries": "recoverable._retry",
        "Envelope": "recoverable.tools",
        "next_action": "recoverable.tools",
        "adapters": "recoverable.adapters",
        "agents": "recoverable.agents",
        "fleet": "recoverable.fleet",
        "instrumentation": "recoverable.instrumentation",
        "integrations": "recoverable.integrations",
        "secrets": "recoverable.secrets",
        "testing": "recoverable.testing",
        "tools": "recoverable.tools",
        "wire": "recoverable.wire",
    },
    # Names that left the root (0.2.0): each use warns, naming the new home.
    moved={
        "Action": "recoverable.tools.Action",
        "Answer": "recoverable.FallbackResult",
        "BreakerPolicy": "recoverable.fleet.BreakerPolicy",
        "Code": "recoverable.CodeRow",
        "CodeRegistry": "type(recoverable.codes)",
        "Cooldowns": "recoverable.fleet.Cooldowns",
        "FailureEvent": "recoverable.instrumentation.FailureEvent",
        "FixCommandRejected": "recoverable.tools.FixCommandRejected",
        "FixRun": "recoverable.tools.FixRun",
        "FleetPolicy": "recoverable.fleet.FleetPolicy",
        "Recovery": "recoverable.tools.Recovery",
        "add_secret_pattern": "recoverable.secrets.add_secret_pattern",
        "code_from_envelope": "recoverable.tools.from_envelope_code",
        "envelope_code": "recoverable.tools.to_envelope_code",
        "get_failure_hooks": "recoverable.instrumentation.get_failure_hooks",
        "recover": "recoverable.tools.recover",
        "retry_if_retryable": "recoverable.adapters.retry_if_retryable",
        "run_fix": "recoverable.tools.run_fix",
        "scrub": "recoverable.secrets.scrub",
        "set_failure_hooks": "recoverable.instrumentation.set_failure_hooks",
        "set_testing": "recoverable.testing.set_testing",
        "stamina_on": "recoverable.adapters.stamina_on",
        "wait_retry_after": "recoverable.adapters.wait_retry_after",
    },
)

if TYPE_CHECKING:
    from . import adapters as adapters
    from . import agents as agents
    from . import fleet as fleet
    from . import instrumentation as instrumentation
    from . import integrations as integrations
    from . import secrets as secrets
    from . import testing as testing
    from . import tools as tools
    from . import wire as wire
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
    from ._core.codes import CodeRow, codes, register_code
    from ._core.detail import ErrorDetail, PayloadError
    from ._core.error import RecoverableError
    from ._core.events import RunResult
    from ._retry import (
        FallbackResult,
        Retrying,
        RetryPolicy,
        afallback,
        fallback,
        request_headers,
        request_key,
        retry,
        without_sdk_retries,
    )
    from .tools import Envelope, next_action

if TYPE_CHECKING:  # the names that moved, typed for the release that still has them
    from ._core.codes import Code as Code
    from ._core.codes import CodeRegistry as CodeRegistry
    from ._core.envelope import code_from_envelope as code_from_envelope
    from ._core.envelope import envelope_code as envelope_code
    from ._retry.fallbacks import Answer as Answer
    from .adapters import retry_if_retryable as retry_if_retryable
    from .adapters import stamina_on as stamina_on
    from .adapters import wait_retry_after as wait_retry_after
    from .fleet import BreakerPolicy as BreakerPolicy
    from .fleet import Cooldowns as Cooldowns
    from .fleet import FleetPolicy as FleetPolicy
    from .instrumentation import FailureEvent as FailureEvent
    from .instrumentation import get_failure_hooks as get_failure_hooks
    from .instrumentation import set_failure_hooks as set_failure_hooks
    from .secrets import add_secret_pattern as add_secret_pattern
    from .secrets import scrub as scrub
    from .testing import set_testing as set_testing
    from .tools import Action as Action
    from .tools import FixCommandRejected as FixCommandRejected
    from .tools import FixRun as FixRun
    from .tools import Recovery as Recovery
    from .tools import recover as recover
    from .tools import run_fix as run_fix


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


# The old tree's module paths import, warning, for one release (`recoverable._core.exports`).
_install_legacy_paths()

# The lower layers call these through the configuration (see `recoverable._core.config`).
_CONFIG.bind(classify=_classify, replay_cli=_replay_cli)
