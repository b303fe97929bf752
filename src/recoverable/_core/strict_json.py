"""JSON from another process read strictly: what Python's parser takes beyond the standard
(`NaN`, `Infinity`, numbers too large for a float) is refused, not turned into values that
break `json.dumps(allow_nan=False)` or arithmetic later."""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["STRICT_JSON"]


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError("a number too large for a float")
    return number


STRICT_JSON = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite)
"""The decoder (`STRICT_JSON.decode(text)`, raises ValueError): built once, as `json.loads`
with hooks would build one per call."""
