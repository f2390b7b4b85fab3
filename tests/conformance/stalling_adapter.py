"""The reference, except that submitting to the eval worker stalls (past the
scenario's patience: the op's deadline ends the driver after 90 s): a run
of ``named/*/user/peer-then-owner`` then holds its named, detached worker
alive until it is interrupted (``test_external.py``)."""
import time

from conformance.adapters.reference import ReferenceAdapter


class StallingAdapter(ReferenceAdapter):
    name = "stalling"

    def submit(self, evaluator, spec) -> None:
        time.sleep(600)
