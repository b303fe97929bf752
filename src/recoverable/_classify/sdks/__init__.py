"""Classifying the exceptions of SDKs, one module per family."""
