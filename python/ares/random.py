"""Random tensors: ``ar.random.rand``, ``random``, ``randn``, ``standard_normal``, ``uniform``.

Chunk ``i`` draws from Xoshiro256++ seeded with ``splitmix(seed, i)`` (``rand``: eight
interleaved generators, as the README's ``rand`` row says), so the values depend on
the seed and the chunking, never on the cluster. Without ``seed=``, a seed is drawn from this
module's generator: ``ar.random.seed(n)`` makes a script's draws repeatable.
"""

from __future__ import annotations

import random as _random

from ._chunks import normalize as _normalize
from ._tensor import Tensor as _Tensor, apply as _apply

_seeds = _random.Random()


def seed(value: int | None = None) -> None:
    """Reseeds the generator of the seeds that calls without ``seed=`` get."""
    _seeds.seed(value)


def _shape(shape) -> tuple:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        return tuple(shape[0])
    return tuple(shape)


def _seed(value):
    return _seeds.getrandbits(63) if value is None else value


def rand(*shape, chunks=None, seed=None) -> _Tensor:
    """Uniform in [0, 1), float64: ``rand(1000, 10, chunks=100)`` or ``rand((1000, 10))``."""
    shape = _shape(shape)
    chunks = _normalize(chunks, len(shape))
    return _apply("rand", (shape,), {"chunk": chunks, "seed": _seed(seed)})


def random(size=(), chunks=None, seed=None) -> _Tensor:
    """NumPy's ``random(size)``: uniform in [0, 1)."""
    return rand(size, chunks=chunks, seed=seed)


random_sample = random


def randn(*shape, chunks=None, seed=None) -> _Tensor:
    """Standard normal, float64."""
    shape = _shape(shape)
    chunks = _normalize(chunks, len(shape))
    return _apply("randn", (shape,), {"chunk": chunks, "seed": _seed(seed)})


def standard_normal(size=(), chunks=None, seed=None) -> _Tensor:
    return randn(size, chunks=chunks, seed=seed)


def uniform(low=0.0, high=1.0, size=(), chunks=None, seed=None) -> _Tensor:
    """Uniform in [low, high)."""
    return rand(size, chunks=chunks, seed=seed) * (high - low) + low


def normal(loc=0.0, scale=1.0, size=(), chunks=None, seed=None) -> _Tensor:
    return randn(size, chunks=chunks, seed=seed) * scale + loc


del annotations  # `from __future__ import annotations` is not part of the API
