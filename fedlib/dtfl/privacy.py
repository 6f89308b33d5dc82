"""Privacy measures for DTFL clients and the measurement of what the smashed data leaks (DTFL Sec. 4.4, Table 5).

- :func:`distance_correlation` / :func:`dcor_loss`: the NoPeek regulariser (Vepakomma et al. 2020) of the paper's
  private client loss f = (1 − α)·f_c + α·DCor(x, z);
- :func:`patch_shuffle`: shuffling blocks of the smashed data before it is sent (our CNN adaptation of the token
  shuffling of Yao et al. 2022, who shuffle ViT patches);
- :func:`reconstruction_attack` / :func:`psnr`: beyond the paper, leakage measured as DCor(x, z) on held-out data and
  the PSNR of a decoder an honest-but-curious server trains on its own images to invert z.
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import Callable

import torch
import torch.nn.functional as F
from torch import nn

from ..core.seeding import resolve_device, torch_generator
from ..core.validate import ParameterTypeError, check_float, check_int
from .run import run_dtfl

__all__ = ["distance_correlation", "DcorLoss", "dcor_loss", "patch_shuffle", "psnr", "reconstruction_attack",
           "DCOR_CHUNK", "DECODER_WIDTH"]

#: images per distance-correlation estimate in :func:`reconstruction_attack`
DCOR_CHUNK = 100
#: channels of the attacker's decoder (:func:`_decoder`)
DECODER_WIDTH = 32
_REL_EPS = 1e-12   # squared distances <= _REL_EPS * (largest squared row norm) count as 0 (value and gradient)


def _check_tensor(name: str, value, min_ndim: int = 1) -> torch.Tensor:
    if not isinstance(value, torch.Tensor) or value.dtype == torch.bool or value.is_complex():
        raise ParameterTypeError(f"{name} must be a real torch.Tensor, got {type(value).__name__}"
                                 f"{'' if not isinstance(value, torch.Tensor) else ' of ' + str(value.dtype)}")
    if value.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimension(s) (samples first), got shape "
                         f"{tuple(value.shape)}")
    if not bool(torch.isfinite(value).all()):
        raise ValueError(f"{name} must hold finite numbers only (no NaN or inf)")
    return value


def _distances(v: torch.Tensor) -> torch.Tensor:
    """[n, d] float64 -> [n, n] Euclidean distances, from centred rows via one matrix product (n²·d, no n²·d memory).

    sqrt is taken of the squared distances clamped below at eps = 1e-12 · (largest squared row norm); pairs at or
    below eps (identical rows, the diagonal) get distance 0 and gradient 0 (sqrt'(0) is infinite).
    """
    v = v - v.mean(0, keepdim=True)                       # translation-invariant; reduces cancellation
    sq_norm = (v * v).sum(1)
    sq = (sq_norm[:, None] + sq_norm[None, :] - 2.0 * v @ v.T).clamp_min(0.0)
    eps = _REL_EPS * sq_norm.detach().max().clamp_min(torch.finfo(v.dtype).tiny)
    keep = (sq > eps) & ~torch.eye(len(v), dtype=torch.bool, device=v.device)
    return torch.where(keep, sq.clamp_min(eps).sqrt(), torch.zeros((), dtype=v.dtype, device=v.device))


def _centred(a: torch.Tensor) -> torch.Tensor:
    return a - a.mean(0, keepdim=True) - a.mean(1, keepdim=True) + a.mean()


def distance_correlation(x: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    """Sample distance correlation dCor(x, z) of Székely et al. (2007), the NoPeek term of Vepakomma et al. (2020).

    x [n, ...] and z [n, ...] are flattened to [n, d_x], [n, d_z]; a, b = pairwise Euclidean distance matrices
    [n, n]; A = a − row mean − column mean + grand mean (B likewise); dCov²(x, z) = mean(A∘B) (the V-statistic);
    dCor = sqrt(dCov²(x, z) / sqrt(dCov²(x, x)·dCov²(z, z))) — the **non-squared** dCor, in [0, 1]: 1 for z an
    affine (similarity) map of x, near 0 (upward biased, O(1/sqrt(n))) for independent x, z. Returns 0 (with zero
    gradient) when a denominator is 0 (all rows of x, or of z, equal).

    Computed in float64 (cast back to the inputs' floating dtype, float32 for integer inputs); differentiable in
    x and z. Numerics: distances come from one matrix product of centred rows; squared distances below
    1e-12 × the largest squared row norm count as 0 (their sqrt would have an infinite gradient), so the
    gradient stays finite at a batch with identical rows.

    Returns: a scalar tensor on the inputs' device.

    Raises:
        ParameterTypeError: x or z is not a real tensor.
        ValueError: fewer than 2 samples, different sample counts, NaN or inf in x or z.
    """
    _check_tensor("x", x)
    _check_tensor("z", z)
    if len(x) != len(z):
        raise ValueError(f"x and z must hold the same number of samples (first dimension), got {len(x)} and {len(z)}")
    if len(x) < 2:
        raise ValueError(f"x and z must hold at least 2 samples, got {len(x)}")
    out_dtype = torch.promote_types(x.dtype, z.dtype)
    if not out_dtype.is_floating_point:
        out_dtype = torch.float32
    a = _centred(_distances(x.reshape(len(x), -1).double()))
    b = _centred(_distances(z.reshape(len(z), -1).double()))
    tiny = torch.finfo(torch.float64).tiny
    prod = (a * a).mean() * (b * b).mean()                 # dCov²(x, x)·dCov²(z, z); clamps keep grads finite
    ratio = (a * b).mean().clamp_min(0.0) / prod.clamp_min(tiny).sqrt()
    ratio = torch.where(prod > tiny, ratio, torch.zeros_like(ratio))
    dcor = torch.where(ratio > tiny, ratio.clamp_min(tiny).sqrt(), torch.zeros_like(ratio))
    return dcor.to(out_dtype)


@dataclass(frozen=True)
class DcorLoss:
    """Client loss (1 − α)·cross_entropy(out, y) + α·dCor(x, z) (DTFL Sec. 4.4); picklable (a dataclass).

    Call: ``loss(out, y, x, z)`` with out [b, K] auxiliary-head logits, y [b] int64 labels, x [b, C, H, W] the
    client's input, z [b, ...] its smashed data (with grad). A term whose weight is exactly 0 is not computed
    (α = 0: exactly the cross-entropy; α = 1: exactly dCor).
    """

    alpha: float

    def __call__(self, out: torch.Tensor, y: torch.Tensor, x: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        if self.alpha == 0.0:
            return F.cross_entropy(out, y)
        if self.alpha == 1.0:
            return distance_correlation(x, z)
        return (1.0 - self.alpha) * F.cross_entropy(out, y) + self.alpha * distance_correlation(x, z)


def dcor_loss(alpha: float) -> DcorLoss:
    """The private client loss f = (1 − α)·f_c + α·DCor(x, z) of DTFL Sec. 4.4 (Table 5: α ∈ {0, .25, .5, .75}).

    Raises: ParameterTypeError (alpha not a number), ValueError (alpha outside [0, 1] or NaN).
    """
    return DcorLoss(check_float("alpha", alpha, 0.0, 1.0))


def patch_shuffle(z: torch.Tensor, patches: int, generator: torch.Generator) -> torch.Tensor:
    """Split the H×W grid of z [B, C, H, W] into patches × patches blocks of (H/patches) × (W/patches) pixels and
    permute the blocks of each sample with its own random permutation (the same for all channels of a sample).

    Our CNN adaptation of Yao et al. (2022), who shuffle the tokens (patches) of a ViT. The permutations are
    drawn from ``generator`` on the CPU (one ``rand`` of [B, patches²], argsort per row) and moved to z's device,
    so CPU and CUDA runs shuffle alike. patches = 1 returns a copy of z. Differentiable (a gather).

    Returns: a new tensor [B, C, H, W]; output block k of sample i is input block perm_i[k] (row-major order).

    Raises:
        ParameterTypeError: z not a tensor, patches not an int, generator not a torch.Generator.
        ValueError: z not 4-D; patches < 1 or not dividing both H and W (the message lists the valid divisors);
            generator not on the CPU.
    """
    if not isinstance(z, torch.Tensor):
        raise ParameterTypeError(f"z must be a torch.Tensor [B, C, H, W], got {type(z).__name__}")
    if z.ndim != 4:
        raise ValueError(f"z must be a 4-D tensor [B, C, H, W], got shape {tuple(z.shape)}")
    check_int("patches", patches, 1)
    if not isinstance(generator, torch.Generator):
        raise ParameterTypeError(f"generator must be a torch.Generator, got {type(generator).__name__}")
    if generator.device.type != "cpu":
        raise ValueError(f"generator must be a CPU torch.Generator (device-independent draws), got one on "
                         f"{generator.device}")
    n, c, h, w = z.shape
    if h % patches or w % patches:
        valid = [p for p in range(1, min(h, w) + 1) if h % p == 0 and w % p == 0]
        raise ValueError(f"patches must divide both H = {h} and W = {w} of z; valid values: {valid}; got {patches}")
    if patches == 1:
        return z.clone()
    k = patches * patches
    perm = torch.rand(n, k, generator=generator).argsort(dim=1).to(z.device)
    ph, pw = h // patches, w // patches
    blocks = z.reshape(n, c, patches, ph, patches, pw).permute(0, 2, 4, 1, 3, 5).reshape(n, k, c, ph, pw)
    index = perm.view(n, k, 1, 1, 1).expand(n, k, c, ph, pw)
    out = blocks.gather(1, index).reshape(n, patches, patches, c, ph, pw)
    return out.permute(0, 3, 1, 4, 2, 5).reshape(n, c, h, w)


def psnr(x: torch.Tensor, x_hat: torch.Tensor) -> torch.Tensor:
    """Per-image peak signal-to-noise ratio in dB for pixels in [0, 1] (peak 1): 10·log10(1 / MSE_i), MSE_i the
    mean squared error over all pixels of image i. x, x_hat: [n, ...] (same shape). Returns [n] float tensor;
    +inf for a perfect reconstruction.

    Raises: ParameterTypeError (not tensors), ValueError (shape mismatch, no image dimension, NaN/inf, a pixel
    outside [0, 1]).
    """
    _check_tensor("x", x)
    _check_tensor("x_hat", x_hat)
    if x.shape != x_hat.shape:
        raise ValueError(f"x and x_hat must have the same shape, got {tuple(x.shape)} and {tuple(x_hat.shape)}")
    for name, v in (("x", x), ("x_hat", x_hat)):
        if bool((v < 0).any() | (v > 1).any()):
            raise ValueError(f"{name} must hold pixels in [0, 1], got values in [{float(v.min())}, {float(v.max())}]")
    mse = (x.double() - x_hat.double()).pow(2).reshape(len(x), -1).mean(1)
    return 10.0 * torch.log10(1.0 / mse)


def _decoder(z_shape, x_shape, generator: torch.Generator) -> nn.Module:
    """Attacker's decoder z [C_z, H_z, W_z] -> x [C_x, H_x, W_x]: conv3×3(C_z→32)+ReLU, bilinear resize to
    H_x×W_x, two conv3×3(32→32)+ReLU, conv3×3(32→C_x), sigmoid (pixels in (0, 1)). 23,425 parameters for
    C_z = 16, C_x = 1. Init: PyTorch's default conv init (Kaiming-uniform a = √5, bias U(±1/√fan_in)) from
    ``generator``."""
    width = DECODER_WIDTH

    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = nn.Conv2d(z_shape[0], width, 3, padding=1)
            self.body = nn.Sequential(nn.ReLU(), nn.Conv2d(width, width, 3, padding=1), nn.ReLU(),
                                      nn.Conv2d(width, width, 3, padding=1), nn.ReLU(),
                                      nn.Conv2d(width, x_shape[0], 3, padding=1), nn.Sigmoid())

        def forward(self, z):
            h = self.inp(z)
            if tuple(h.shape[-2:]) != tuple(x_shape[-2:]):
                h = F.interpolate(h, size=tuple(x_shape[-2:]), mode="bilinear", align_corners=False)
            return self.body(h)

    dec = Decoder()
    for m in dec.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_uniform_(m.weight, a=math.sqrt(5), generator=generator)
            bound = 1.0 / math.sqrt(m.weight[0].numel())
            nn.init.uniform_(m.bias, -bound, bound, generator=generator)
    return dec


def _channel_stats(pixel_mean, pixel_std, channels: int, dev) -> tuple[torch.Tensor, torch.Tensor]:
    """``pixel_mean`` / ``pixel_std`` (a number, or one per channel) as ``[1, C, 1, 1]`` float32 tensors."""
    out = []
    for name, v, low in (("pixel_mean", pixel_mean, None), ("pixel_std", pixel_std, 0.0)):
        vals = list(v) if isinstance(v, (list, tuple)) else [v]
        vals = [check_float(name, u, low, low_open=low is not None) for u in vals]
        if len(vals) not in (1, channels):
            raise ValueError(f"{name} must be a number or {channels} numbers (one per channel), got {len(vals)}")
        out.append(torch.tensor(vals, dtype=torch.float32, device=dev).view(1, -1, 1, 1))
    return out[0], out[1]


def reconstruction_attack(client: nn.Module, x_fit: torch.Tensor, x_eval: torch.Tensor, *,
                          transform: Callable[[torch.Tensor], torch.Tensor] | None = None, epochs: int = 5,
                          batch_size: int = 50, lr: float = 1e-3, seed: int = 0, device="cpu",
                          pixel_mean: float | tuple = 0.5, pixel_std: float | tuple = 0.5) -> dict:
    """Model-inversion attack of an honest-but-curious server that holds auxiliary images x_fit: it sees
    z = transform(client(x)) and trains a decoder z -> x (:func:`_decoder`), then inverts x_eval's z.

    The client (e.g. ``model[:c]``) is deep-copied, put on ``device`` in eval mode and run under no_grad (frozen;
    the caller's module is untouched). z of all images is computed once (memory n × size of z), ``transform``
    applied once per chunk of ``batch_size`` images (e.g. ``lambda z: patch_shuffle(z, 2, gen)``). Training: MSE
    on pixels in [0, 1] (x·pixel_std + pixel_mean, rounding clamped), Adam(lr), ``epochs`` passes in minibatches of
    ``batch_size`` (last one smaller), decoder init from ``torch_generator(seed, "model")``, batch order from
    ``torch_generator(seed, "data")`` (a CPU randperm per epoch).

    Args: x_fit [n_fit, C, H, W], x_eval [n_eval, C, H, W] (n_eval >= 2) normalised images; device: as in
        :func:`fedlib.core.seeding.resolve_device`; pixel_mean, pixel_std: the data's normalisation, a number or
        one per channel (pixels = x·pixel_std + pixel_mean; Fashion-MNIST's 0.5 / 0.5 by default).

    Returns: {"psnr_db": mean over x_eval images of 10·log10(1/MSE_i) (dB), "mse": mean of MSE_i, "dcor": mean of
        dCor(x, z) over consecutive chunks of DCOR_CHUNK = 100 eval images (a remainder < 100 is left out so every
        estimate has the same bias; all images in one chunk when n_eval < 100), "dcor_chunks": their number,
        "n_fit", "n_eval"}.

    Raises: ParameterTypeError / ValueError for a bad argument (named): images not 4-D, shapes differing, NaN,
        pixels outside [0, 1] after de-normalisation (check pixel_mean / pixel_std), transform changing the batch.
    """
    if not isinstance(client, nn.Module):
        raise ParameterTypeError(f"client must be a torch.nn.Module, got {type(client).__name__}")
    for name, v in (("x_fit", x_fit), ("x_eval", x_eval)):
        _check_tensor(name, v)
        if v.ndim != 4:
            raise ValueError(f"{name} must be images [n, C, H, W], got shape {tuple(v.shape)}")
    if x_fit.shape[1:] != x_eval.shape[1:]:
        raise ValueError(f"x_fit and x_eval must have the same image shape, got {tuple(x_fit.shape[1:])} and "
                         f"{tuple(x_eval.shape[1:])}")
    if len(x_fit) < 1 or len(x_eval) < 2:
        raise ValueError(f"x_fit must hold >= 1 image and x_eval >= 2 images, got {len(x_fit)} and {len(x_eval)}")
    if transform is not None and not callable(transform):
        raise ParameterTypeError(f"transform must be callable or None, got {type(transform).__name__}")
    epochs, batch_size = check_int("epochs", epochs, 1), check_int("batch_size", batch_size, 1)
    lr = check_float("lr", lr, 0.0, low_open=True)
    check_int("seed", seed, 0)
    dev = resolve_device(device)
    mean, std = _channel_stats(pixel_mean, pixel_std, x_fit.shape[1], dev)

    def pixels(x):
        p = x.to(dev, torch.float32) * std + mean
        if bool((p < -1e-4).any() | (p > 1 + 1e-4).any()):
            raise ValueError(f"images de-normalised with pixel_mean={mean}, pixel_std={std} must lie in [0, 1], got "
                             f"[{float(p.min()):.4g}, {float(p.max()):.4g}]")
        return p.clamp(0.0, 1.0)

    target_fit, target_eval = pixels(x_fit), pixels(x_eval)
    frozen = copy.deepcopy(client).to(dev).eval()

    @torch.no_grad()
    def smash(x):
        parts = []
        for i in range(0, len(x), batch_size):
            xb = x[i:i + batch_size].to(dev, torch.float32)
            zb = frozen(xb)
            zb = zb if transform is None else transform(zb)
            if not isinstance(zb, torch.Tensor) or len(zb) != len(xb):
                raise ValueError("transform must return a tensor with one row per image of its input")
            parts.append(zb.float())
        return torch.cat(parts)

    z_fit, z_eval = smash(x_fit), smash(x_eval)
    decoder = _decoder(z_fit.shape[1:], x_fit.shape[1:], torch_generator(seed, "model")).to(dev)
    optim = torch.optim.Adam(decoder.parameters(), lr=lr)
    order_gen = torch_generator(seed, "data")
    decoder.train()
    for _ in range(epochs):
        order = torch.randperm(len(z_fit), generator=order_gen).to(dev)
        for i in range(0, len(order), batch_size):
            idx = order[i:i + batch_size]
            loss = F.mse_loss(decoder(z_fit[idx]), target_fit[idx])
            optim.zero_grad(set_to_none=True)
            loss.backward()
            optim.step()
    decoder.eval()
    with torch.no_grad():
        x_hat = torch.cat([decoder(z_eval[i:i + batch_size]) for i in range(0, len(z_eval), batch_size)])
        per_image = psnr(target_eval, x_hat)
        mse = (target_eval.double() - x_hat.double()).pow(2).reshape(len(x_hat), -1).mean(1)
        size = DCOR_CHUNK if len(x_eval) >= DCOR_CHUNK else len(x_eval)
        dcors = [float(distance_correlation(x_eval[i:i + size].to(dev), z_eval[i:i + size]))
                 for i in range(0, len(x_eval) - size + 1, size)]
    return {"psnr_db": float(per_image.mean()), "mse": float(mse.mean()), "dcor": sum(dcors) / len(dcors),
            "dcor_chunks": len(dcors), "n_fit": len(x_fit), "n_eval": len(x_eval)}


class PatchShuffle:
    """``z -> patch_shuffle(z, patches, generator)`` with its own generator (``stream`` of ``seed``; training,
    evaluation and the attacker each draw from their own stream, so that one's draws never shift another's)."""

    def __init__(self, patches: int, seed: int, stream: str = "system/shuffle"):
        self.patches = check_int("patches", patches, 2)
        self.gen = torch_generator(seed, stream)

    def __call__(self, z: torch.Tensor) -> torch.Tensor:
        return patch_shuffle(z, self.patches, self.gen)


def privacy_record(cfg, data, cuts, cut: int, alpha: float, patches: int, seed: int, used: int, attack_fit: int,
                   attack_eval: int, attack_epochs: int, device: str = "cpu", backend: str = "auto") -> dict:
    """The record a ``dtfl_privacy`` key stores (DTFL Table 5): DTFL training (:func:`fedlib.dtfl.run.run_dtfl`
    of ``cfg`` with every client at cut layer ``cut``: ``cuts`` ``[R, K]``) with the distance-correlation loss of
    weight ``alpha`` (0 = none) and ``patches`` × ``patches`` patch shuffling of the smashed data (1 = none; its own
    streams for training, evaluation and the attacker), then the reconstruction attack on the final client model:
    fitted on the ``attack_fit`` training images after the first ``used`` (those the clients trained on), scored on
    the first ``attack_eval`` test images over ``attack_epochs`` epochs, in pixel units of the 8-bit images.

    Returns:
        ``run_dtfl``'s record without the model, ``attack`` (:func:`reconstruction_attack`'s dict: ``psnr_db``,
        ``mse``, ``dcor``, ...) and ``data_source``.
    """
    shuffle = PatchShuffle(patches, seed) if patches > 1 else None
    rec = run_dtfl(cfg, data, cuts, device, keep_model=True, client_loss=dcor_loss(alpha) if alpha else None,
                   smashed_transform=shuffle, eval_transform=PatchShuffle(patches, seed, "system/shuffle_eval")
                   if patches > 1 else None, backend=backend)
    client = rec.pop("model")[:cut]
    lo = data.x_train.amin(dim=(0, 2, 3))                      # 8-bit images hold pixels 0 and 255 in every
    hi = data.x_train.amax(dim=(0, 2, 3))                      # channel: pixels = (x - lo) / (hi - lo)
    attack = reconstruction_attack(client, data.x_train[used:used + attack_fit], data.x_test[:attack_eval],
                                   transform=PatchShuffle(patches, seed, "system/shuffle_attack")
                                   if patches > 1 else None, epochs=attack_epochs, seed=seed, device=device,
                                   pixel_mean=tuple((-lo / (hi - lo)).tolist()),
                                   pixel_std=tuple((1 / (hi - lo)).tolist()))
    return dict(rec, attack=attack, data_source=data.source)
