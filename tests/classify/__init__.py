"""Tests of classify."""
