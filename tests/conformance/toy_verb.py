"""A verb added through the verb table alone (``test_toy_verb.py``): its
declaration below is all there is; the driver runs it, the probe and the
deadline follow its declaration, the script generator writes its lines."""
from conformance.adapters.reference import ReferenceAdapter
from conformance.ops.verbs import IMPL, verb


@verb(IMPL, "toy: read the buffer's length twice (args: none)",
      needs=lambda op: ("toy_reads",),
      deadline=lambda op, adapter, spec: 30.0,
      script=lambda op, w: ["first, second = len(buffer), len(buffer)",
                            "return f'toy: {first} {second}'"])
def toy_len_twice(ctx, op):
    buffer = ctx.objects["buffer"]
    return {"first": ctx.adapter.buffer_len(buffer), "second": ctx.adapter.buffer_len(buffer)}


class ToyAdapter(ReferenceAdapter):
    """The reference, declaring the toy verb's feature."""

    name = "toy"
    features = ReferenceAdapter.features | {"toy_reads"}
