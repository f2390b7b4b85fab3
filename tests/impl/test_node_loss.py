"""Components whose actors are lost with their node (a two-node local
``ray.cluster_utils.Cluster``; the worker node is killed, not drained)."""

import os
import time

import pytest
import ray
from ray.cluster_utils import Cluster

from impl import ComponentClosedError, RayCollector, RayEvalWorker, RayReplayBuffer
from impl_support import READY_TIMEOUT, constant_policy_maker, timed, wait_until

ON_NODE_B = {"resources": {"node_b": 0.1}}


@pytest.fixture
def two_nodes(own_ray, monkeypatch):
    temp_dir = own_ray["_temp_dir"]
    # Cluster writes its address under $RAY_TMPDIR/ray: keep it private.
    os.makedirs(os.path.join(temp_dir, "ray"), exist_ok=True)
    monkeypatch.setenv("RAY_TMPDIR", temp_dir)
    cluster = Cluster(
        initialize_head=True,
        head_node_args=dict(num_cpus=2, include_dashboard=False, temp_dir=temp_dir),
    )
    try:
        node_b = cluster.add_node(num_cpus=2, resources={"node_b": 1})
        cluster.wait_for_nodes()
        ray.init(address=cluster.address)
        yield cluster, node_b
    finally:
        ray.shutdown()
        cluster.shutdown()


def test_components_on_a_lost_node_report_dead_and_tear_down(two_nodes):
    cluster, node_b = two_nodes
    components = [
        RayReplayBuffer(100, remote_config=ON_NODE_B, ready_timeout=READY_TIMEOUT),
        RayCollector("CartPole-v1", frames_per_batch=16, num_collectors=2, remote_configs={"num_cpus": 0.5, **ON_NODE_B},
                     ready_timeout=READY_TIMEOUT),
        RayEvalWorker(None, "CartPole-v1", constant_policy_maker, num_cpus=0.5, **ON_NODE_B,
                      ready_timeout=READY_TIMEOUT),
    ]
    assert all(c.is_alive() for c in components)
    cluster.remove_node(node_b, allow_graceful=False)
    lost = time.monotonic()
    for c in components:
        assert wait_until(lambda: not c.is_alive(), timeout=5)
        assert time.monotonic() - lost < 10  # each within 5 s of the loss, checked in turn
    for c in components:
        teardown = c.close if isinstance(c, RayReplayBuffer) else c.shutdown
        assert timed(teardown) < 5
        assert timed(teardown) < 1
    with pytest.raises(ComponentClosedError, match="RayReplayBuffer is closed: sample"):
        components[0].sample(1)
    assert ray.is_initialized()  # found running: left to its owner
