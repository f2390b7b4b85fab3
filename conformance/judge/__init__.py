"""Judging a recorded run: the oracles (pure functions over the history), their
findings, the adapter's conventions, the verdict."""
