"""Retry and fallback that obey a classification: the loop, its policy, the adapters."""
