r"""Where summarizers fail and where one beats another: ROUGE by the length of the reference.

The analyses of ``metametric-jax analyze rouge`` (:mod:`metametric_jax.analysis` is the engine), on the examples of
:mod:`metametric_jax.tasks.rouge` (rouge-score's tokens, statistics and per-example figures; several reference files
keep, per type, the reference of highest F1):

* ``overall`` — one bucket, ``all``: the figures of ``score rouge``, exactly (its per-example rows,
  :func:`~metametric_jax.tasks.rouge.example_rows`, read out by its :func:`~metametric_jax.tasks.rouge.readout`: the
  means over examples of each type's precision, recall and F1); its test is ``compare rouge``'s test of the first
  type's F1.
* ``reference_length`` — the same means over the examples whose reference has ``0-50``, ``51-100``, ``101-200`` or
  ``201+`` tokens (rouge-score's tokens of the first reference file's text): the bucketing of compare-mt's
  sentence-length analysis and ExplainaBoard's summarization attributes, on the reference.
* custom — ``buckets={"name": fn}``: ``fn(Example)`` names the bucket of an example.

A bucket's ``count`` is its examples; the F1 of the first ROUGE type asked for is tested. The unit resampled is the
example, as ``score rouge --bootstrap`` and ``compare rouge`` resample.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from metametric_jax.errors import InputFormatError
from metametric_jax.tasks import buckets as kit
from metametric_jax.tasks import rouge

if TYPE_CHECKING:
    from typing import Unpack

__all__ = ["LENGTHS", "Example", "length_bucket", "analyze", "analyze_files"]

LENGTHS = ("0-50", "51-100", "101-200", "201+")


class Example(NamedTuple):
    """An example as a custom bucketing sees it.

    Attributes:
        position: its position (0-based; line ``position + 1`` of the files).
        references: its references, one per reference file.
        tokens: the number of tokens of its first reference.
    """

    position: int
    references: tuple[Any, ...]
    tokens: int


def length_bucket(tokens: int) -> str:
    """``0-50``, ``51-100``, ``101-200`` or ``201+`` tokens."""
    return kit.range_bucket(tokens, LENGTHS)


def _count(totals: Any) -> float:
    return float(totals[-1])


def _report(
    references: Sequence[Sequence[Any]],
    systems: Sequence[Sequence[Any]],
    *,
    names: Sequence[str],
    reference_name: str | None,
    types: tuple[str, ...],
    use_stemmer: bool,
    buckets: Mapping[str, Callable[[Example], Any]] | None,
    settings: kit.Settings,
    warnings: Sequence[str] = (),
    jobs: int = 1,
) -> dict[str, Any]:
    kit.refuse_names(buckets, ("overall", "reference_length"))
    n = len(references)
    units = np.arange(n, dtype=np.int64)
    lengths = [len(rouge.tokenize(refs[0])) for refs in references]
    examples = [Example(k, tuple(refs), t) for k, (refs, t) in enumerate(zip(references, lengths))]
    width = 3 * len(types) + 1
    readout = functools.partial(rouge.readout, types=types)
    tested = f"{types[0]}/f1"
    found = kit.Analyses(len(systems), units, settings)
    overall = found.add(
        "overall", width, readout, tested, count=_count, title="Overall", description="every example: score rouge"
    )
    by_length = found.add(
        "reference_length",
        width,
        readout,
        tested,
        count=_count,
        order=LENGTHS,
        title="Reference length",
        description="tokens of the (first) reference",
    )
    custom = found.custom(buckets, width, readout, tested, count=_count)
    length_names = [length_bucket(t) for t in lengths]
    custom_names = {name: [str(fn(x)) for x in examples] for name, fn in (buckets or {}).items()}
    for s, predictions in enumerate(systems):
        stats = rouge.stats_in_chunks(predictions, references, types, use_stemmer=use_stemmer, jobs=jobs)
        rows = rouge.example_rows(stats)
        overall.add(rows, units, ["all"] * n, s)
        by_length.add(rows, units, length_names, s)
        for name, listed in custom_names.items():
            custom[name].add(rows, units, listed, s)
    return found.report("rouge", systems=names, references=reference_name, unit="examples", warnings=warnings)


def analyze(
    references: Sequence[Any],
    systems: Sequence[Sequence[Any]],
    *,
    names: Sequence[str] | None = None,
    types: str | Iterable[str] = rouge.DEFAULT_TYPES,
    use_stemmer: bool = False,
    multi_reference: bool = False,
    buckets: Mapping[str, Callable[[Example], Any]] | None = None,
    **settings: Unpack[kit.Tests],
) -> dict[str, Any]:
    """The analysis report of summaries in memory (the JSON of ``metametric-jax analyze rouge``).

    Args:
        references: one reference per example, or with ``multi_reference=True`` a list of references per example.
        systems: each system's summaries, one per example, the first the baseline.
        names: the systems' names in the report (default ``system 1``, ``system 2``...).
        types: ROUGE types, as :func:`metametric_jax.tasks.rouge.score`; the first one's F1 is tested.
        use_stemmer: Porter-stem tokens, as rouge-score's ``use_stemmer=True``.
        multi_reference: each example has several references (the first one's length buckets it).
        buckets: custom bucketings, ``{name: fn(Example) -> bucket name}``.
        **settings: the tests' settings (:class:`~metametric_jax.tasks.buckets.Tests`).

    Raises:
        ValueError: on a bad request, an unknown type, or a system with another number of examples.
    """
    kit.need_systems(systems)
    refs = [list(r) for r in references] if multi_reference else [[r] for r in references]
    kit.check_systems(systems, refs, "rouge")
    for k, r in enumerate(refs):
        if not r:
            raise ValueError(f"example {k} has no reference")
    return _report(
        refs,
        [list(x) for x in systems],
        names=kit.system_names(names, len(systems)),
        reference_name=None,
        types=rouge.parse_types(types),
        use_stemmer=use_stemmer,
        buckets=buckets,
        settings=kit.Settings(**settings),
    )


def analyze_files(
    references: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    systems: Sequence[str | os.PathLike[str]],
    *,
    types: str | Iterable[str] = rouge.DEFAULT_TYPES,
    use_stemmer: bool = False,
    buckets: Mapping[str, Callable[[Example], Any]] | None = None,
    jobs: int = 1,
    **settings: Unpack[kit.Tests],
) -> dict[str, Any]:
    """The analysis report of summary files, read as ``score rouge`` reads them (one example per line).

    Args:
        references: a reference file or several (each type keeps the reference of highest F1; the first file's
            lengths bucket the examples).
        systems: the systems' summary files, the first the baseline.
        types: ROUGE types, as :func:`analyze`.
        use_stemmer: as :func:`analyze`.
        buckets: custom bucketings, as :func:`analyze`.
        jobs: worker processes that score the examples (0: every core; default 1: this process); the report is
            the same for every number.
        **settings: the tests' settings (:class:`~metametric_jax.tasks.buckets.Tests`).

    Raises:
        InputFormatError: files with different numbers of examples, a bad ``.jsonl`` line, or no example at all.
    """
    kit.need_systems(systems)
    ref_paths = [references] if isinstance(references, (str, os.PathLike)) else list(references)
    kinds = rouge.parse_types(types)
    texts, refs = rouge.read_pairs(systems[0], ref_paths)
    if not texts:
        raise InputFormatError(os.fspath(ref_paths[0]), None, "expected examples to analyze, one per line; found none")
    predictions = [texts] + [rouge.read_pairs(path, ref_paths)[0] for path in systems[1:]]
    return _report(
        refs,
        predictions,
        names=[os.fspath(p) for p in systems],
        reference_name=" ".join(os.fspath(p) for p in ref_paths),
        types=kinds,
        use_stemmer=use_stemmer,
        buckets=buckets,
        settings=kit.Settings(**settings),
        jobs=jobs,
    )
