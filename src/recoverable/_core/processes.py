"""What every reader of a finished process shares: the AI CLIs, read by their own parsers, and
how much of stderr is read.

Plain constants, importing nothing: the runner under `recoverable exec` reads them before
anything classifies (`exec -- true` that succeeds loads no classification at all).
"""

from __future__ import annotations

__all__ = ["AI_CLIS", "STDERR_TAIL_CHARS"]

AI_CLIS = frozenset({"claude", "codex", "gemini"})
"""The programs whose output their own parser reads (a process exit of one is a run's)."""
STDERR_TAIL_CHARS = 8192
"""The end of stderr that is read (phrases, AI CLIs)."""
