"""Ray actor of the eval worker.

Imports nothing heavy at module level: ``init_fn`` runs first in the actor
process, before torch is imported (some simulators need that).
"""

from __future__ import annotations

import ray

from impl.control import CONTROL_GROUPS, Control


@ray.remote(concurrency_groups=CONTROL_GROUPS)
class EvalActor(Control):
    """Holds an env and a policy; runs one evaluation episode per call."""

    def __init__(self, init_fn, env_maker, policy_maker):
        if init_fn is not None:
            init_fn()
        from impl.rollout import Stepper, make_env

        env = make_env(env_maker)
        self._stepper = Stepper(env, policy_maker(env))

    def evaluate(self, weights, max_steps: int) -> dict:
        """Load ``weights`` (if any), run one episode: ``{"reward", "steps"}``."""
        from impl.rollout import load_weights

        if weights is not None:
            load_weights(self._stepper.policy, weights)
        return self._stepper.evaluate(max_steps)

    def close_env(self) -> None:
        self._stepper.close()
