"""An implementation that lacks a convention and says so
(``test_conventions.py``): the reference collector of
``regression:sync-batch-not-divided`` (every actor collects frames_per_batch
frames in sync mode, nothing refused), declaring every feature but
``sync_division``."""
from conformance.adapters.reference import ReferenceAdapter
from conformance.adapters.regressions import REGRESSIONS, RegressionAdapter


class UndividedAdapter(RegressionAdapter):
    def __init__(self):
        super().__init__(REGRESSIONS["sync-batch-not-divided"])
        self.name = "undivided"
        self.features = ReferenceAdapter.features - {"sync_division"}
