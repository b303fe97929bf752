"""Tests of classify/http."""
