"""Mutation analysis of the reference (``impl/``) with cosmic-ray: how many
realistic bugs the suite's scenarios catch. See ``docs/mutation.md``."""
