r"""A metric class's static configuration, and the arithmetic of its sums: statistics to rows, rows to named sums.

:class:`MetricConfig` is what a metric class is (its name, normalizers, 0/0 values, statistics function and tallies)
and its signature, the number that tells states of two configurations apart across processes. A batch's per-example
statistics :math:`(\phi(P,R), \phi(P,P), \phi(R,R))` and tallies become rows
``(xy, xx, yy, one normalized score per reported normalizer, 1, tallies)`` (:func:`stats_rows`: the rule of
:func:`metametric_jax.normalizer.normalized_rows`, on the host in one array where every normalizer is a built-in
ratio, :func:`host_plan`); summed rows become the named leaves of a :class:`metametric_jax.accumulate.Metric` state
(:func:`named_sums`). A state built on the host keeps its sums in one NumPy array (:func:`host_named_sums` names its
rows, :func:`host_pair` packs a state's NumPy sums again); :func:`to_state_dict` and :func:`from_state_dict` are a
state's checkpoint.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import zlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import jax.numpy as jnp
import numpy as np

from metametric_jax import _compensated as comp
from metametric_jax.normalizer import Normalizer, _combined, normalized_rows

__all__ = [
    "MetricConfig",
    "MICRO",
    "MIXED",
    "merged_signature",
    "stats_rows",
    "host_plan",
    "host_rows",
    "named_sums",
    "host_named_sums",
    "host_signature",
    "host_merged_signature",
    "pack",
    "host_pair",
    "to_state_dict",
    "from_state_dict",
]

MICRO = ("xy", "xx", "yy")

#: the signature of a merge of states with different signatures (configuration signatures are never negative)
MIXED = -1


def merged_signature(a: Any, b: Any) -> Any:
    """The signature of a merge: the common one, or :data:`MIXED` where the two differ (never silently one side's)."""
    return jnp.where(a == b, a, MIXED)


#: signature -> metric name of every metric class made in this process (to name the other side in messages)
KNOWN_SIGNATURES: dict[int, str] = {}


@dataclasses.dataclass(frozen=True, eq=False)
class MetricConfig:
    r"""Static configuration of a metric class (compared by identity: one config per metric class).

    Attributes:
        name: the metric's name (used in messages).
        normalizer: the declared normalizer, used by ``score``.
        reported: the normalizers reported by ``compute`` (micro and ``macro_``); ``none`` is reported as
            ``overlap``.
        zero_division: value of any 0/0 other than two empty structures.
        empty_score: per-example normalized score of two empty structures (self-overlaps both 0).
        batch_stats: host function ``(predictions, references) -> float64 array (n, 3)`` of per-example
            :math:`\phi(P,R), \phi(P,P), \phi(R,R)`.
        source: the similarity (or function) the metric was built from, for ``explain`` and messages.
        tallies: names of per-example counts the statistics function gives after (xy, xx, yy) (columns ``3:``), such
            as the pairs a solver did not prove optimal; the state sums them (``tally``) and ``compute`` reports
            them, so they survive merges across batches and processes.
    """

    name: str
    normalizer: Normalizer
    reported: tuple[Normalizer, ...]
    zero_division: float
    empty_score: float
    batch_stats: Callable[[Sequence[Any], Sequence[Any]], np.ndarray] | None
    source: Any = None
    tallies: tuple[str, ...] = ()

    @functools.cached_property
    def macro_names(self) -> tuple[str, ...]:
        """The keys of the state's ``macro`` leaves: each reported normalizer's name (``overlap`` for ``none``)."""
        return tuple("overlap" if n.is_identity else n.name for n in self.reported)

    @property
    def self_bounded(self) -> bool:
        """Whether the statistics come from a similarity bounded by its self-similarities (then ``xy <= xx, yy``)."""
        return bool(getattr(self.source, "self_bounded", False))

    @functools.cached_property
    def signature(self) -> int:
        """A number identifying this configuration across processes (name, normalizers, 0/0 values, source)."""
        source = self.source
        described = getattr(source, "name", None) or getattr(source, "__qualname__", None) or type(source).__name__
        text = "|".join(
            [self.name, ",".join(self.macro_names), self.normalizer.name, repr(self.zero_division)]
            + [repr(self.empty_score), type(source).__name__, str(described)]
            + ([",".join(self.tallies)] if self.tallies else [])
        )
        value = zlib.crc32(text.encode("utf-8")) & 0x7FFFFFFF
        KNOWN_SIGNATURES.setdefault(value, self.name)
        return value

    @functools.cached_property
    def host_plan(self) -> tuple[np.ndarray, np.ndarray, list[int], list[int], bool] | None:
        """:func:`host_plan` of the reported normalizers (looked up once)."""
        return host_plan(self.reported)

    def __repr__(self) -> str:
        return f"MetricConfig({self.name!r}, normalizer={self.normalizer.name!r})"


def stats_rows(cfg: MetricConfig, stats: Any) -> Any:
    """Per-example rows ``(n, 3 + K + 1 + T)``: (xy, xx, yy), the K normalized scores, 1, the T tallies (NumPy or jnp).

    Statistics without tally columns (``(n, 3)``) count 0 for each tally.
    """
    if isinstance(stats, np.ndarray) and stats.dtype == np.float64:
        plan = cfg.host_plan
        if plan is not None:
            return host_rows(cfg, stats, *plan)
    xp = np if isinstance(stats, np.ndarray) else jnp
    base = stats[:, :3]
    norm = normalized_rows(base, cfg.reported, cfg.zero_division, cfg.empty_score)
    t = len(cfg.tallies)
    tallies = stats[:, 3 : 3 + t] if stats.shape[1] >= 3 + t else xp.zeros((stats.shape[0], t), stats.dtype)
    return xp.concatenate([base, norm, xp.ones_like(stats[:, :1]), tallies], axis=1)


@functools.cache
def host_plan(normalizers: tuple[Normalizer, ...]) -> tuple[np.ndarray, np.ndarray, list[int], list[int], bool] | None:
    """For built-in ratios and ``none`` only: ``normalized_rows``'s coefficient arrays and where its columns go.

    The last item says whether a matrix product gives the same bits as fixed-order sums on every processor: every
    coefficient row has at most two nonzero coefficients, each a power of two (exact products, one rounded addition).
    """
    linear = [k for k, m in enumerate(normalizers) if m.builtin and m.linear is not None]
    identity = [k for k, m in enumerate(normalizers) if m.is_identity]
    if len(linear) + len(identity) != len(normalizers) or not all(normalizers[k].builtin for k in identity):
        return None
    a = np.asarray([normalizers[k].linear[0] for k in linear], dtype=np.float64)  # type: ignore[index]
    b = np.asarray([normalizers[k].linear[1] for k in linear], dtype=np.float64)  # type: ignore[index]
    product = all(
        np.count_nonzero(row) <= 2 and all(math.frexp(c)[0] in (0.5, -0.5) for c in row.tolist() if c)
        for row in (*a, *b)
    )
    return a, b, linear, identity, product


def host_rows(
    cfg: MetricConfig, stats: np.ndarray, a: np.ndarray, b: np.ndarray, linear: list, identity: list, product: bool
) -> Any:
    """:func:`stats_rows` of float64 NumPy statistics when every reported figure is a built-in ratio or ``none``.

    The same operations as :func:`metametric_jax.normalizer.normalized_rows` on each value (so the same rows, bit for
    bit), written into one array instead of column by column: the host path runs once per batch.
    """
    n, k, t = stats.shape[0], len(cfg.reported), len(cfg.tallies)
    base = stats[:, :3]
    out = np.empty((n, 4 + k + t))
    out[:, :3] = base
    if linear:
        if product:  # at most two exact terms a coefficient row: one rounding, whatever the kernel does
            num, den = base @ a.T, base @ b.T
        else:  # fixed-order sums: no kernel's fused products or order
            num, den = _combined(base, a), _combined(base, b)
        first, last = 3 + linear[0], 4 + linear[-1]
        cols: Any = slice(first, last) if last - first == len(linear) else [3 + j for j in linear]
        if den.all() and base[:, 1].all():  # no 0/0 and no empty pair: the quotients themselves
            if isinstance(cols, slice):
                np.divide(num, den, out=out[:, cols])
            else:
                out[:, cols] = num / den
        else:
            zero = den == 0
            ratios = num / np.where(zero, 1.0, den)
            ratios[zero] = cfg.zero_division
            ratios[(base[:, 1] == 0) & (base[:, 2] == 0)] = cfg.empty_score
            out[:, cols] = ratios
    for j in identity:
        out[:, 3 + j] = base[:, 0]
    out[:, 3 + k] = 1.0
    if t:
        out[:, 4 + k :] = stats[:, 3 : 3 + t] if stats.shape[1] >= 3 + t else 0.0
    return out


def named_sums(cfg: MetricConfig, pairs: Any) -> dict[str, Any]:
    """Split a ``(..., 3 + K + 1 + T, 2)`` pair array into the state's named leaves."""
    k = len(cfg.reported)
    return {
        "micro": {key: pairs[..., j, :] for j, key in enumerate(MICRO)},
        "macro": {key: pairs[..., 3 + j, :] for j, key in enumerate(cfg.macro_names)},
        "count": pairs[..., 3 + k, :],
        "tally": {key: pairs[..., 4 + k + j, :] for j, key in enumerate(cfg.tallies)},
    }


def host_named_sums(cfg: MetricConfig, pairs: np.ndarray) -> dict[str, Any]:
    """:func:`named_sums` of a NumPy pair array: the same views, taken row by row (once per batch on the host)."""
    rows = list(pairs) if pairs.ndim == 2 else list(np.moveaxis(pairs, -2, 0))
    k = len(cfg.reported)
    return {
        "micro": dict(zip(MICRO, rows[:3])),
        "macro": dict(zip(cfg.macro_names, rows[3 : 3 + k])),
        "count": rows[3 + k],
        "tally": dict(zip(cfg.tallies, rows[4 + k :])),
    }


_SIGNATURES: dict[int, np.ndarray] = {}


def host_signature(cfg: MetricConfig, shape: tuple[int, ...]) -> np.ndarray:
    """The configuration's signature as a read-only int32 NumPy array of ``shape`` (one shared array for a scalar)."""
    if not shape and cfg.signature in _SIGNATURES:
        return _SIGNATURES[cfg.signature]
    out = np.full(shape, cfg.signature, np.int32)
    out.flags.writeable = False
    if not shape:
        _SIGNATURES[cfg.signature] = out
    return out


def host_merged_signature(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """:func:`merged_signature` of two NumPy signatures, in NumPy (the common array itself where both are one)."""
    if a is b:
        return a
    out = np.where(a == b, a, MIXED).astype(np.int32)
    out.flags.writeable = False
    return out


def pack(cfg: MetricConfig, sums: Any) -> np.ndarray:
    """Named NumPy sums as one float32 array ``(..., 3 + K + 1 + T, 2)`` (rows: micro, macro, count, tally)."""
    rows = [sums["micro"][k] for k in MICRO] + [sums["macro"][k] for k in cfg.macro_names] + [sums["count"]]
    rows += [sums.get("tally", {}).get(k, np.zeros_like(sums["count"])) for k in cfg.tallies]
    return np.stack([np.asarray(r, np.float32) for r in rows], axis=-2)


def host_fold(packed: np.ndarray, signature: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool] | None:
    """Stacked states (:func:`host_pair`'s, at least one) merged one by one on the host, as a sequential jitted merge.

    Returns the packed total, its signature (``MIXED`` where the states' differ) and whether it may be added on the
    host again; ``None`` where a partial sum leaves :func:`metametric_jax._compensated.add_host`'s range.
    """
    stacked, sig = packed.reshape((-1, *packed.shape[-2:])), signature.reshape(-1)
    total, exact = stacked[0], True
    for part in stacked[1:]:
        if not exact:
            return None
        total, exact = comp.add_host(total, part)
    merged = np.array(sig[0] if bool(np.all(sig == sig[0])) else MIXED, np.int32)
    merged.flags.writeable = False
    return np.array(total, np.float32), merged, exact


def host_pair(cfg: MetricConfig, sums: Any, signature: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`pack` of a state's sums, and its signature, where the jitted merge's bits can be had on the host.

    That is: every sum a float32 NumPy array of the count's shape, under this configuration's names, an int32 NumPy
    signature, and values within :func:`metametric_jax._compensated.host_exact`; else ``None``.
    """
    shape = np.shape(sums["count"])
    if type(signature) is not np.ndarray or signature.dtype != np.int32 or signature.shape != shape[:-1]:
        return None
    names = (set(sums["micro"]), set(sums["macro"]), set(sums["tally"]))
    if names != (set(MICRO), set(cfg.macro_names), set(cfg.tallies)):
        return None
    leaves = [sums["count"], *sums["micro"].values(), *sums["macro"].values(), *sums["tally"].values()]
    if not all(type(x) is np.ndarray and x.dtype == np.float32 and x.shape == shape for x in leaves):
        return None
    packed = pack(cfg, sums)
    return (packed, signature) if comp.host_exact(packed) else None


# ------------------------------------------------------------------------------------------------ checkpoints
def to_state_dict(state: Any) -> dict[str, Any]:
    """A metric state's checkpoint (flax serialization, orbax): its name, signature and named sums."""
    return {
        "metric": state.config.name,
        "signature": state.signature,
        "micro": dict(state.micro),
        "macro": dict(state.macro),
        "count": state.count,
        **({"tally": dict(state.tally)} if state.config.tallies else {}),
    }


def from_state_dict(target: Any, state: Mapping[str, Any]) -> Any:
    """``target`` with a checkpoint's sums, refused when the checkpoint is another metric's or configuration's."""
    cfg = target.config
    name = state.get("metric")
    if isinstance(name, bytes):
        name = name.decode("utf-8", "replace")
    keys = sorted(state.get("macro", {}))
    sig = state.get("signature")
    other_signature = sig is not None and bool(np.any(np.asarray(sig) != cfg.signature))
    if name != cfg.name or keys != sorted(cfg.macro_names) or other_signature:
        raise ValueError(
            f"Cannot restore a state of metric {name!r} (macro figures {keys}) into metric {cfg.name!r} (macro "
            f"figures {sorted(cfg.macro_names)}): the checkpoint belongs to a different metric or configuration."
        )
    return target.replace(
        micro={k: jnp.asarray(state["micro"][k]) for k in MICRO},
        macro={k: jnp.asarray(state["macro"][k]) for k in cfg.macro_names},
        count=jnp.asarray(state["count"]),
        tally={
            k: jnp.asarray(state["tally"][k]) if "tally" in state else jnp.zeros_like(jnp.asarray(state["count"]))
            for k in cfg.tallies
        },
        signature=jnp.asarray(sig, jnp.int32),
    )
