"""DTFL's tiers (Sec. 3.2, App. A.5, Tables 10/11): which
modules each tier keeps on the client, and the auxiliary head that gives the client its local loss.

The global model is 8 modules md1..md8 (:func:`fedlib.split.resnet_cifar`). With M tiers (1 <= M <= 7), tier
m (1 <= m <= M) keeps md1..md_{7-M+m} on the client and md_{8-M+m}..md8 on the server (md8 is always on the
server): M = 7 gives tier 1 = md1, ..., tier 7 = md1..md7 (Table 10); M = 6 gives tier 1 = md1..md2, ...,
tier 6 = md1..md7 (Table 11, the paper's Table 1 setting); M = 1 is the single tier md1..md7.
"""
from __future__ import annotations

from torch import nn

from ..core.validate import check_int

#: modules of the global model (md1..md8) and the most tiers the rule allows (md8 stays on the server)
NUM_MODULES = 8
MAX_TIERS = NUM_MODULES - 1


def check_num_tiers(num_tiers, name: str = "num_tiers") -> int:
    """``num_tiers`` (M) as an int in 1..7. Raises ``ValueError`` / ``ParameterTypeError`` naming ``name`` (the
    caller's parameter: ``num_tiers``, ``table2_tiers``, ``tiers_list[2]``)."""
    return check_int(name, num_tiers, 1, MAX_TIERS, extra=" (M: tiers of the 8-module model, md8 stays on "
                                                          "the server)")


def client_modules(num_tiers: int, tier: int) -> int:
    """Modules on the client in ``tier`` of ``num_tiers`` (the engine's cut): 7 - M + m (Table 11).

    Raises:
        ValueError: M outside 1..7 or the tier outside 1..M (naming ``num_tiers`` / ``tier``).
    """
    m_max = check_num_tiers(num_tiers)
    tier = check_int("tier", tier, 1, m_max, extra=f" (tiers of M = {m_max})")
    return MAX_TIERS - m_max + tier


def tier_cuts(num_tiers: int) -> list[int]:
    """``[client_modules(M, m) for m in 1..M]``: e.g. M = 7 -> [1..7], M = 6 -> [2..7], M = 1 -> [7]."""
    return [client_modules(num_tiers, m) for m in range(1, check_num_tiers(num_tiers) + 1)]


def tier_table(num_tiers: int) -> list[dict]:
    """Table 11 for one M: per tier ``{"tier", "client": "md1..md_c", "server": "md_{c+1}..md8", "cut"}``."""
    rows = []
    for m, c in enumerate(tier_cuts(num_tiers), start=1):
        client = "md1" if c == 1 else f"md1..md{c}"
        server = "md8" if c == 7 else f"md{c + 1}..md8"
        rows.append({"tier": m, "cut": c, "client": client, "server": server})
    return rows


def aux_head_factory(num_classes: int):
    """The auxiliary network of every tier (Sec. 4.1, App. A.5): global average pool + one fully connected layer
    whose input width is the channel count of the client's smashed data (16 after md1, 64 after md2/md3, 128 after
    md4/md5, 256 after md6/md7 at width 1; Table 10).

    Returns:
        ``aux_head(cut, smashed_shape) -> nn.Module`` for :func:`fedlib.split.init_state`; the module maps
        ``[B, C, H, W] -> [B, num_classes]``.

    Raises:
        ValueError: fewer than 2 classes.
    """
    num_classes = check_int("num_classes", num_classes, 2)

    def aux_head(cut: int, smashed_shape: tuple) -> nn.Module:
        return nn.Sequential(nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(), nn.Linear(int(smashed_shape[0]), num_classes))

    return aux_head
