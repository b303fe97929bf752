"""The process-wide configuration: one object, one lock (as stamina's `_Config`).

Every process-wide value of the library lives on `CONFIG`, in two kinds:

- Switches a user sets (`testing`, `failure_hooks`, ...): a read is one attribute load and
  takes no lock, because a value is immutable and only ever replaced whole, under the lock.
- Late bindings, where a lower layer needs a higher one: the value's `RecoverableError.ensure`
  and the failure hooks classify what they are given, and a process exit of an AI CLI is read
  by that CLI's own parser. The package face (`recoverable/__init__.py`), which Python runs
  before any module of ours, binds the higher functions here (`bind`), so the answer never
  depends on what else happened to be imported, and no module imports upwards.
"""

from __future__ import annotations

import _thread

# Not `typing.TYPE_CHECKING`: this module is on the path of `import recoverable`.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Callable, Sequence
    from typing import NoReturn

    from .detail import ErrorDetail
    from .events import RunResult
    from .failures import FailureHook

__all__ = ["CONFIG", "Config", "Stages"]


def _unbound(*_: object) -> NoReturn:
    raise RuntimeError("recoverable's layers are not bound: import recoverable first")


class Config:
    """The process-wide switches and late bindings; `CONFIG` is the one instance."""

    __slots__ = (
        "_lock",
        "classify",
        "failure_hooks",
        "json_decoder",
        "json_standard_bytes",
        "replay_cli",
        "scrubbed",  # the scrubber's, with scrubbed_keys and secret_patterns (below)
        "scrubbed_keys",
        "secret_patterns",
        "stages",
        "testing",
    )

    def __init__(self) -> None:
        self._lock = _thread.allocate_lock()
        self.testing: bool = False
        """Whether every retry wait is off (`recoverable.testing.set_testing`)."""
        self.failure_hooks: tuple[FailureHook, ...] | None = None
        """The failure hooks (`set_failure_hooks`); None: the default, logging."""
        self.classify: Callable[[object], ErrorDetail] = _unbound
        """`recoverable.classify`, bound by the package face."""
        self.replay_cli: Callable[[str, str, str, int | None, int | None], RunResult] = _unbound
        """`recoverable.agents.replay` (an AI CLI's output read by its parser), bound likewise."""
        # classify's block (`recoverable._classify.pipeline` reads and replaces it).
        self.stages: Stages = Stages()
        """classify's stages; set by the classify face on first use, and by users' stages."""
        # agents' block (`recoverable.agents._line_json.json_accelerator` reads and replaces it).
        self.json_decoder: JsonDecoder | Literal[True] | None = True
        """The JSON accelerator of the AI CLIs' lines: True until it is looked up (once the
        standard parser has read enough lines), then msgspec's decoder, or None without it."""
        self.json_standard_bytes = 0
        """The bytes of JSON lines the standard parser read while `json_decoder` was True."""

        # The scrubber's (`recoverable._core.secrets`): the patterns users added, and what it
        # remembers of the texts and mapping keys it scrubbed lately. The memos are caches,
        # filled in place and emptied when full; each is replaced whole, after the patterns,
        # when a pattern is added (a scrub under way keeps the memo it read, so nothing
        # scrubbed without the new pattern is remembered with it).
        self.secret_patterns: tuple[re.Pattern[str], ...] = ()
        """The patterns `add_secret_pattern` added, in order (the built-in ones are secrets')."""
        self.scrubbed: dict[str, object] = {}
        """The texts scrubbed lately, each with what became of it (`scrub`'s memo)."""
        self.scrubbed_keys: dict[str, tuple[str, bool]] = {}
        """The mapping keys read lately, each as kept and whether it names a credential."""

    def set_testing(self, on: bool) -> None:
        """Turn every retry wait off, or back on."""
        with self._lock:
            self.testing = bool(on)

    def set_failure_hooks(self, hooks: Sequence[FailureHook] | None) -> None:
        """Replace the failure hooks whole (None: the default)."""
        with self._lock:
            self.failure_hooks = None if hooks is None else tuple(hooks)

    def add_secret_pattern(self, pattern: re.Pattern[str]) -> None:
        """Scrub what `pattern` matches too, from now on; the memos start over."""
        with self._lock:
            self.secret_patterns = (*self.secret_patterns, pattern)
            self.scrubbed, self.scrubbed_keys = {}, {}

    def forget_scrubbed(self) -> None:
        """Empty the scrubber's memos (new ones: a scrub under way keeps its own)."""
        with self._lock:
            self.scrubbed, self.scrubbed_keys = {}, {}

    def bind(
        self,
        *,
        classify: Callable[[object], ErrorDetail],
        replay_cli: Callable[[str, str, str, int | None, int | None], RunResult],
    ) -> None:
        """Bind the higher layers' functions the lower ones call (the package face does)."""
        with self._lock:
            self.classify = classify
            self.replay_cli = replay_cli

    def set_stages(self, stages: Stages) -> None:
        """Replace classify's stages whole (`recoverable._classify.pipeline` does, and then
        clears the routes it cached from the old ones)."""
        with self._lock:
            self.stages = stages

    def add_standard_json_bytes(self, line_bytes: int) -> int:
        """Count a JSON line the standard parser is about to read; the count so far."""
        with self._lock:
            self.json_standard_bytes += line_bytes
            return self.json_standard_bytes

    def set_json_decoder(self, decoder: JsonDecoder | Literal[True] | None) -> None:
        """Replace the JSON accelerator (None: none; True: to be looked up again)."""
        with self._lock:
            self.json_decoder = decoder


# --- classify's stages (the block of `recoverable._classify`) ------------------------------

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Final

    # As `recoverable._classify.pipeline` names them.
    Handler = Callable[[BaseException], ErrorDetail | None]
    TextStage = Callable[[str], ErrorDetail | None]


def _no_text_stage(text: str) -> None:
    return None


class Stages:
    """classify's stages, one value: never changed (its fields are `Final`), only replaced
    whole, so the hot path reads it without a lock."""

    __slots__ = ("by_name", "generic", "text", "users")

    def __init__(
        self,
        *,
        by_name: Mapping[tuple[str, str], Handler] | None = None,
        generic: tuple[Handler, ...] = (),
        text: TextStage = _no_text_stage,
        users: tuple[Handler, ...] = (),
    ) -> None:
        self.by_name: Final[Mapping[tuple[str, str], Handler]] = by_name or {}
        """Handlers by (package, class name), matched over an exception's MRO."""
        self.generic: Final[tuple[Handler, ...]] = generic
        """The stages after the by-name handlers (a generic `status_code`, ...)."""
        self.text: Final[TextStage] = text
        """The stage for the text of an error no link of whose chain is recognised."""
        self.users: Final[tuple[Handler, ...]] = users
        """Users' stages (`add_classifier`), before every built-in one."""

    def replace(
        self,
        *,
        by_name: Mapping[tuple[str, str], Handler] | None = None,
        generic: tuple[Handler, ...] | None = None,
        text: TextStage | None = None,
        users: tuple[Handler, ...] | None = None,
    ) -> Stages:
        """A copy with the given fields replaced."""
        return Stages(
            by_name=self.by_name if by_name is None else by_name,
            generic=self.generic if generic is None else generic,
            text=self.text if text is None else text,
            users=self.users if users is None else users,
        )


CONFIG = Config()
"""The one configuration of this process."""


# --- agents' block: the JSON accelerator of the AI CLIs' lines (`agents._parsing`) -------------

if TYPE_CHECKING:
    from typing import Any, Literal

    JsonDecoder = Callable[[str | bytes], Any]
    """str or UTF-8 bytes to Python data; raises on anything it refuses."""
