"""What the retry and fleet tests drive `rc.retry` with: a clock that moves only when told (or
when a wait is slept), and a function that fails on cue."""

from __future__ import annotations

from collections.abc import Callable


class Clock:
    """Seconds that move only when told or when a wait is slept: `clock()` reads them, `sleep`
    and `asleep` record the wait (rounded to the microsecond) and move on by it."""

    def __init__(self, now: float = 0.0) -> None:
        self.now = now
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(round(seconds, 6))
        self.now += seconds

    async def asleep(self, seconds: float) -> None:
        self.sleep(seconds)


def failing(*errors: BaseException, result: object = "ok") -> Callable[[], object]:
    """A function that raises each error in turn, then returns `result`; `fn.calls` counts
    its calls."""
    queue = list(errors)
    calls: list[int] = []

    def fn() -> object:
        calls.append(1)
        if queue:
            raise queue.pop(0)
        return result

    fn.calls = calls  # type: ignore[attr-defined]
    return fn
