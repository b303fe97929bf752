"""Classifying HTTP answers: statuses, Retry-After, provider error bodies, our own bodies."""
