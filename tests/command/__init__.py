"""Tests of command."""
