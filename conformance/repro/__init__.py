"""A failure reproduced outside the suite: the scenario shrunk, a standalone
script, an issue body, checked alone."""
