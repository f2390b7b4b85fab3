"""The user's own work on their cluster, which the suite must never touch:
``python user_workload.py ADDRESS``, in the user's environment, prints one
JSON line and then runs as a long-running job until it is killed:

- a named detached actor (``user-service`` in namespace ``user-ns``) and an
  unnamed detached one, both of this job, as a user's service would be;
- a non-detached actor, working (a counter it is asked to bump every 0.2 s).

Everything is defined here (pickled by value): the cluster needs nothing of
the suite for it.
"""
import json
import os
import sys
import time

import ray


@ray.remote(num_cpus=0)
class UserService:
    def __init__(self):
        self.count = 0

    def pid(self):
        return os.getpid()

    def bump(self):
        self.count += 1
        return self.count


def main(address: str) -> None:
    # The user's explicit address: Ray 2.60 then wants RAY_AUTH_MODE=token
    # set by the user for a cluster with token authentication.
    ray.init(address=address, namespace="user-ns", log_to_driver=False)
    named = UserService.options(name="user-service", lifetime="detached").remote()
    unnamed = UserService.options(lifetime="detached").remote()
    worker = UserService.remote()
    actors = {"named": named, "unnamed": unnamed, "worker": worker}
    print(json.dumps({
        "job_id": ray.get_runtime_context().get_job_id(), "pid": os.getpid(),
        "actors": {k: {"id": h._actor_id.hex(), "pid": ray.get(h.pid.remote())}
                   for k, h in actors.items()}}), flush=True)
    while True:  # a long-running job: its actor keeps working
        ray.get(worker.bump.remote())
        time.sleep(0.2)


if __name__ == "__main__":
    main(sys.argv[1])
