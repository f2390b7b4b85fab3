"""The policy a collector is built with when a scenario sends it weights
(``construct collector(policy=module)``), and the weights the ``weights``
verb sends, in each form a user passes them.

``CartPolePolicy`` is a CartPole policy (4 observations -> 2 actions) whose
action is fixed by its weights: a zero weight matrix and a one-hot bias make
``argmax`` pick ``action`` whatever the observation. The batches a collector
yields then tell which weights each of its actors holds (the
``weights_take_effect`` oracle reads their ``action`` entry).

Module level, so that Ray workers import it by module (``conformance`` is on
their path, as ``conformance.envs`` is); torch is imported here, so only a
driver that builds such a policy pays for it. A standalone script carries
this source (``helpers``).
"""
from __future__ import annotations

import torch
from tensordict import TensorDict
from torch import nn

#: the action of the policy a collector is built with (``Spec.policy``)
BUILT_ACTION = 0
#: the weight forms ``update_policy_weights_`` accepts, and one it must refuse
FORMS = ("module", "tensordict", "dict")
INVALID_FORM = "list"


class CartPolePolicy(nn.Module):
    """``observation -> action``: a Linear(4, 2) whose weights choose ``action``
    for every observation."""

    def __init__(self, action: int = 0):
        super().__init__()
        self.linear = nn.Linear(4, 2)
        with torch.no_grad():
            self.linear.weight.zero_()
            self.linear.bias.copy_(torch.eye(2)[action])

    def forward(self, observation):
        return self.linear(observation).argmax(-1)


class CartPoleActor(nn.Module):
    """``CartPolePolicy`` as an actor network: ``observation -> (logits, action)``."""

    def __init__(self, action: int = 0):
        super().__init__()
        self.policy = CartPolePolicy(action)

    def forward(self, observation):
        logits = self.policy.linear(observation)
        return logits, logits.argmax(-1)


def CartPoleTDPolicy(action: int = 0):
    """The policy as torchrl users write one: a TensorDictModule reading
    ``observation`` and writing ``logits`` and ``action`` (as a torchrl actor
    writes its distribution's parameters beside the action). Called on a
    plain tensor it returns both: only its ``action`` entry is the action."""
    from tensordict.nn import TensorDictModule

    return TensorDictModule(CartPoleActor(action), in_keys=["observation"],
                            out_keys=["logits", "action"])


def fixed_action(observation, action: int = 0) -> int:
    """A policy as a plain function: ``action`` whatever the observation, a
    Python int (no tensor)."""
    return action


def CartPoleFunctionPolicy(action: int = 0):
    """``fixed_action`` bound to ``action``: a plain callable policy, picklable
    by reference (Ray workers import this module)."""
    import functools

    return functools.partial(fixed_action, action=action)


#: the policies a collector may be built with (``Spec.policy``), by name
POLICIES = {"module": CartPolePolicy, "tdmodule": CartPoleTDPolicy,
            "function": CartPoleFunctionPolicy}


def weights_of(form: str, action: int):
    """The weights of ``CartPolePolicy(action)`` as a user sends them: the
    module itself, a TensorDict, a nested dict of tensors; ``"list"``: a
    list of tensors, which no form accepts (a TypeError is the clear answer)."""
    module = CartPolePolicy(action)
    if form == "module":
        return module
    if form == "tensordict":
        return TensorDict.from_module(module).data.clone()
    if form == "dict":
        return {"linear": {name: p.detach().clone() for name, p in module.linear.named_parameters()}}
    if form == "list":
        return [p.detach().clone() for p in module.parameters()]
    raise ValueError(f"unknown weights form {form!r}")


#: what a standalone script defines for them (``Verb.script_header``)
HELPERS = ("import torch", "from tensordict import TensorDict", "from torch import nn",
           CartPolePolicy, CartPoleActor, CartPoleTDPolicy, fixed_action, CartPoleFunctionPolicy,
           weights_of)
