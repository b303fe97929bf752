"""The agent-tool side: the envelope and its exit codes, the ladder, the fix runner, exec and
the toolkit.

    from recoverable import tools

    envelope = tools.Envelope.failure(error)     # cli-agent-spec: {"ok": false, "error": ...}
    action = tools.next_action(detail)           # retry, run_fix, apply_fix or stop
    recovery = tools.recover(call, run_fixes=True, allow_fixes=["uv sync"])   # the ladder, run

`to_envelope_code` / `from_envelope_code` map a detail's code to the envelope's error code and
back; `run_fix` runs one registered fix command (`FixRun`); `FixCommandRejected` is what a
fix command the registry refuses raises; `toolkit` makes a click or typer command an agent tool.
"""

from .._core.exports import Face

TYPE_CHECKING = False

__all__ = [
    "Action",
    "Envelope",
    "FixCommandRejected",
    "FixRun",
    "Recovery",
    "from_envelope_code",
    "next_action",
    "recover",
    "run_fix",
    "to_envelope_code",
]

# public name -> the module that defines it (loaded on first use); `toolkit` too
_FACE = Face(
    __name__,
    {
        "FixCommandRejected": "recoverable._core.codes",
        "Envelope": "recoverable._core.envelope",
        "from_envelope_code": "recoverable._core.envelope",
        "to_envelope_code": "recoverable._core.envelope",
        "Action": "recoverable.tools._ladder",
        "next_action": "recoverable.tools._ladder",
        "FixRun": "recoverable.tools._recover",
        "Recovery": "recoverable.tools._recover",
        "recover": "recoverable.tools._recover",
        "run_fix": "recoverable.tools._recover",
        "toolkit": "recoverable.tools.toolkit",
    },
)

if TYPE_CHECKING:
    from .._core.codes import FixCommandRejected
    from .._core.envelope import Envelope, from_envelope_code, to_envelope_code
    from . import toolkit as toolkit
    from ._ladder import Action, next_action
    from ._recover import FixRun, Recovery, recover, run_fix


def __getattr__(name: str) -> object:
    return _FACE.attribute(name)


def __dir__() -> list[str]:
    return _FACE.names()
