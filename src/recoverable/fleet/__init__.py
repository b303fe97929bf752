"""The fleet: cooldowns and breakers shared by every process that calls one key.

    from recoverable.fleet import Cooldowns

    fleet = Cooldowns.sqlite("fleet.sqlite")   # one machine; .memory(): one process; .redis(url)
    rc.retry(cooldowns=fleet).call(ask, client, "hello")

A 429 one worker sees quiets the key for every worker sharing the store, for as long as the
provider asked (`FleetPolicy`); a key that keeps failing opens its circuit (`BreakerPolicy`).
"""

from .._core.exports import Face

TYPE_CHECKING = False

__all__ = ["BreakerPolicy", "Cooldowns", "FleetPolicy"]

# public name -> the module that defines it (loaded on first use)
_FACE = Face(
    __name__,
    {
        "Cooldowns": "recoverable.fleet._cooldowns",
        "BreakerPolicy": "recoverable.fleet._rules",
        "FleetPolicy": "recoverable.fleet._rules",
    },
)

if TYPE_CHECKING:
    from ._cooldowns import Cooldowns
    from ._rules import BreakerPolicy, FleetPolicy


def __getattr__(name: str) -> object:
    return _FACE.attribute(name)


def __dir__() -> list[str]:
    return _FACE.names()
