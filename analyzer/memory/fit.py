"""Whether the weights leave the KV cache any room: what explain says about memory for a launch that
resolves and passes the start-up checks.

The engine sizes the pools with the GPU's whole memory free (``symbolic.pool_startup``): the most a
node can measure, so a check that fails there fails on the node too. How much the weights take is not
something start-up's code knows before it loads them, so explain does not predict from it; it states
it as an alternative, with the weights from the model directory's files when they are on this machine,
else estimated from config.json (``memory.weights``), and names ``sgtrace memory``, which runs SGLang's
own sizing with them. ``mem_fraction_static`` is the share of the GPU for the weights and the KV cache
together (SGLang's help for ``--mem-fraction-static``), so what it leaves after the weights is what the
KV cache can get.
"""

from __future__ import annotations

from typing import Any

from ..symbolic.pool_startup import whole_memory_gib
from ..contracts.trace import Unknown
from . import weights as weights_module
from ..plain_dataclass import plain_dataclass

GIB = 1 << 30
ESTIMATE_MARGIN = 1.1  # an estimate from config.json this far over the share is no room whatever its error


@plain_dataclass(frozen=True)
class WeightsFit:
    """Whether the weights leave room for the KV cache on one GPU of the profile."""

    weights_rank_gib: float  # the target's weights one GPU holds: the checkpoint / tp_size / pp_size (a draft's not counted)
    how: str  # how the weights' bytes were found: "index", "headers", "estimate"
    detail: str  # in words: the file, or the estimate's inputs
    gpu_gib: float  # the GPU's memory less what is in use before SGLang starts (the profile's)
    mem_fraction_static: float

    @property
    def static_gib(self) -> float:
        """What mem_fraction_static gives the weights and the KV cache together."""
        return self.gpu_gib * self.mem_fraction_static

    @property
    def kv_cache_gib(self) -> float:
        return self.static_gib - self.weights_rank_gib

    @property
    def fits(self) -> bool:
        return self.kv_cache_gib > 0

    @property
    def clearly_short(self) -> bool:
        """No room, whatever an estimate's error: the weights measured, or estimated 10% over the share."""
        return not self.fits and (self.measured or self.weights_rank_gib > ESTIMATE_MARGIN * self.static_gib)

    @property
    def measured(self) -> bool:
        return self.how in ("index", "headers")

    def to_dict(self) -> dict[str, Any]:
        return {"weights_per_gpu_gib": round(self.weights_rank_gib, 2), "how": self.how, "detail": self.detail,
                "gpu_gib": round(self.gpu_gib, 2), "mem_fraction_static": self.mem_fraction_static,
                "kv_cache_gib": round(self.kv_cache_gib, 2), "fits": self.fits}


def weights_fit(explanation) -> WeightsFit | None:
    """The weights against what mem_fraction_static gives them on one GPU; None when a figure is missing
    (no model config, no GPU memory in the profile, a value the engine left unknown)."""
    model, profile = explanation.model, explanation.profile
    config = getattr(model, "config", None) if model is not None else None
    total = whole_memory_gib(profile)
    final = explanation.trace.final
    fraction, tp, pp = final.get("mem_fraction_static"), final.get("tp_size") or 1, final.get("pp_size") or 1
    if config is None or isinstance(total, Unknown) or not isinstance(fraction, (int, float)) or isinstance(fraction, bool):
        return None
    if not (isinstance(tp, int) and isinstance(pp, int)) or tp < 1 or pp < 1:
        return None
    found = weights_module.weights_for(final.get("model_path"), config)
    rank = found.per_rank(tp, pp)
    if rank is None or found.how not in ("index", "headers", "estimate"):
        return None
    used = float(getattr(profile, "startup_used_mib", 0) or 0) / 1024
    return WeightsFit(rank / GIB, found.how, found.detail, total - used, float(fraction))
