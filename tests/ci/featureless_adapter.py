"""An adapter that declares no feature a scenario needs (only its buffer
component, ``buffer``: the catalog stays the one of a collector and a
buffer): each scenario that needs one is a ``skip`` entry, reached without
starting Ray. tests/ci/test_merge.py runs whole shard runs of the suite with
it, xdist workers included, in seconds."""
from conformance.adapter import Adapter


class FeaturelessAdapter(Adapter):
    name = "featureless"
    features = frozenset({"buffer"})
