"""What giving up a flag of yours costs: the features an operator turns on and would not give up lightly.

A fix that leaves out or changes a flag you gave, or turns a feature off with its ``--disable-x``, gives
something up; these weights order such fixes (``sgtrace fix``'s ranking, explain's Fix line), lowest first. Keeping the PD role, speculative decoding,
DP attention and the radix cache weighs most (issue 15); any other flag of yours changed or left out,
or env var of yours unset or changed, costs ``DEFAULT_COST``; a change that keeps everything costs nothing.
"""

from __future__ import annotations

FEATURE_COST = {
    "disaggregation_mode": 100,  # the node's PD role: a decode node must stay a decode node
    "speculative_algorithm": 50,
    "enable_dp_attention": 20,
    "disable_radix_cache": 20,  # turning the radix cache off
    "lora_paths": 50,
    "enable_lora": 50,
    "enable_deterministic_inference": 40,
    # what the node was sized for: the weights' precision, and how the model is laid out over the GPUs (another tensor
    # or pipeline size changes what each GPU holds); the data- and expert-parallel sizes weigh a plain flag's cost
    "quantization": 30,
    "tp_size": 20,
    "tensor_parallel_size": 20,
    "pp_size": 20,
    "pipeline_parallel_size": 20,
    # a server role a fix would set (``SERVER_ROLE``): what the PD role weighs
    "encoder_only": 100,
    "language_only": 100,
}
# what a node is: a fix that sets one makes the node another kind of server (an encoder-only server of encode /
# prefill / decode disaggregation, a language-only one, a PD role), whatever else it keeps; it costs that role
SERVER_ROLE = {"encoder_only": "an encoder-only server (it serves the multimodal encoder alone)",
               "language_only": "a language-only server (the multimodal encoder runs elsewhere)",
               "disaggregation_mode": "a node of another PD disaggregation role"}
FAMILY_COST = {"speculative_": 50}  # a setting of a feature weighs what the feature does (speculative_adaptive)
DEFAULT_COST = 10
ENV_COST = DEFAULT_COST  # an env var of yours unset or changed: what another flag of yours left out or changed costs
SWITCHED_ON_COST = 15  # an ``--enable-...`` switch of yours left out: a feature turned off, though not a listed one
DECODE_RADIX_COST = 1  # a PD decode node runs without the radix cache unless told otherwise
RADIX_FIELDS = ("disable_radix_cache", "disaggregation_decode_enable_radix_cache")


def feature_cost(dest: str) -> float:
    """What turning off or changing the feature ``dest`` of yours costs."""
    if dest in FEATURE_COST:
        return FEATURE_COST[dest]
    return next((cost for prefix, cost in FAMILY_COST.items() if dest.startswith(prefix)), DEFAULT_COST)


def dropped_cost(dest: str, decode_node: bool = False) -> float:
    """What leaving out your flag of field ``dest`` costs: your ``--disable-x`` left out turns x back on (a flag of
    yours, no feature lost); an unlisted ``--enable-x`` switch turns a feature off; else the feature's weight. On a
    PD decode node the radix cache costs ``DECODE_RADIX_COST``."""
    if dest.startswith("disable_"):
        cost: float = DEFAULT_COST
    elif dest.startswith("enable_") and dest not in FEATURE_COST:
        cost = SWITCHED_ON_COST
    else:
        cost = feature_cost(dest)
    return min(cost, DECODE_RADIX_COST) if dest in RADIX_FIELDS and decode_node else cost


def set_cost(dest: str, changes_yours: bool, decode_node: bool = False) -> float:
    """What setting field ``dest`` costs: a value of yours changed (``changes_yours``), a feature turned off with
    its ``--disable-x`` (the radix cache: little on a PD decode node), or the node made another kind of server
    (``SERVER_ROLE``: ``--encoder-only``); else nothing."""
    if not (changes_yours or dest.startswith("disable_") or dest in SERVER_ROLE):
        return 0.0
    cost = feature_cost(dest)
    return min(cost, DECODE_RADIX_COST) if dest in RADIX_FIELDS and decode_node else cost


def decode_node(values: dict[str, object]) -> bool:
    """Whether the launch's parsed values make it a PD decode node (``--disaggregation-mode decode``)."""
    return str(values.get("disaggregation_mode") or "") == "decode"
