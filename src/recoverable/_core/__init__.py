"""The shared vocabulary, the bottom layer: the value, the code table, events, fix commands,
the public view of a detail, untrusted input, secrets. Imports nothing else of ours."""

__version__ = "0.1.0"
"""The installed version."""
