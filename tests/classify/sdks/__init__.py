"""Tests of classify/sdks."""
