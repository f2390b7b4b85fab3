"""Random lifecycle walks: seeded op sequences, replayable and shrinkable."""
from __future__ import annotations


def walk_from_id(scenario_id: str):
    return None
