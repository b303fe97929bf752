"""Tests of support."""
