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

__all__ = ["CONFIG", "Config"]


def _unbound(*_: object) -> NoReturn:
    raise RuntimeError("recoverable's layers are not bound: import recoverable first")


class Config:
    """The process-wide switches and late bindings; `CONFIG` is the one instance."""

    __slots__ = (
        "_lock",
        "classify",
        "failure_hooks",
        "replay_cli",
        "scrubbed",  # the scrubber's, with scrubbed_keys and secret_patterns (below)
        "scrubbed_keys",
        "secret_patterns",
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


CONFIG = Config()
"""The one configuration of this process."""
