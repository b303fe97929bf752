"""Shared test setup."""

from __future__ import annotations

import os

# litellm fetches a price map from the internet at import unless told not to; tests only ever
# talk to 127.0.0.1.
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ.setdefault("LITELLM_LOG", "ERROR")
