"""What a release reading says other jobs' actors hold (``Context.held_by_others``),
from a GCS answer the test sets: started ones on their node, pending ones
without a worker on any (``ANY_NODE``), never this driver's own jobs' or the
torn-down component's, and an unanswered query recorded as such."""

from conformance.ops.history import ANY_NODE
from conformance.run.driver import Context


class Observer:
    def __init__(self, answer):
        self.answer = answer

    def live_actors(self):
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def context(answer, jobs=(("127.0.0.1:1", "01000000"),)):
    ctx = Context.__new__(Context)  # only what held_by_others reads
    ctx._observer, ctx.gcs_address, ctx.jobs = Observer(answer), "127.0.0.1:1", list(jobs)
    return ctx


def actor(state, node, job="02000000", pid=0, cpu=0.25):
    return {"state": state, "node_id": node, "job_id": job, "pid": pid,
            "required_resources": {"CPU": cpu, "memory": 0.0}}


def test_other_jobs_actors_by_node_pending_ones_anywhere():
    ctx = context({
        "alive": actor("ALIVE", "n1", pid=10),
        "starting": actor("PENDING_CREATION", "n2", pid=11),   # a worker runs its constructor
        "waiting": actor("PENDING_CREATION", "n1"),            # no worker: the owner's node id
        "mine": actor("ALIVE", "n1", pid=12),                  # the torn-down component's
        "own-job": actor("ALIVE", "n1", job="01000000", pid=13),
    })
    assert ctx.held_by_others(["mine"]) == {"actors": {
        "alive": {"node": "n1", "resources": {"CPU": 0.25}},
        "starting": {"node": "n2", "resources": {"CPU": 0.25}},
        "waiting": {"node": ANY_NODE, "resources": {"CPU": 0.25}},
    }}


def test_an_unanswered_query_is_recorded_and_the_rule_counts_nobody_else():
    found = context(RuntimeError("deadline exceeded")).held_by_others([])
    assert found == {"error": "GCS query failed: deadline exceeded"}
