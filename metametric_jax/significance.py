r"""How sure are we: bootstrap confidence intervals and paired significance tests, as mergeable accumulators.

A metric's state is a sum of per-example rows (:meth:`metametric_jax.Metric.example_rows`), so ``B`` bootstrap
replicates are ``B`` weighted sums of the same rows: matching, the expensive part, runs once per example.

* :func:`bootstrap` ``(M, replicates=1000, seed=0, level=0.95)`` (:mod:`metametric_jax.bootstrap`) — an accumulator
  class for any metric or suite ``M``. Its state holds ``M``'s plain sums and ``B`` replicate sums; replicate
  :math:`b` weights example :math:`i` by a Poisson(1) draw :math:`w_{bi}` (the Poisson bootstrap: Hanley and
  MacGibbon 2006; Chamandy et al. 2012), a pure
  function of ``(seed, example id, b)`` (:func:`poisson_weights`). So the state does not depend on batch sizes, order,
  devices or hosts, and replicate :math:`b` equals ``M`` computed with ``weights=poisson_weights(ids, B, seed)[b]``,
  its sums rescaled to the number of examples (so an interval of a raw sum, ``overlap`` or a count, is conditioned on
  the number of examples; ratios are unchanged: see :meth:`BootstrapState.replicates`).
  ``compute()`` gives ``{"estimate", "low", "high", "stderr"}``, each with the structure of ``M.compute()``: the
  percentile interval at ``level`` and the standard deviation of the replicates (Efron and Tibshirani 1993).
  Figures derived from several sums (F1, the CoNLL average) are computed per replicate, not averaged.
* :func:`paired_bootstrap` ``(state_a, state_b)`` — the paired bootstrap test (Koehn 2004; Berg-Kirkpatrick et al.
  2012) of two systems scored on the same examples with the same seed: per figure ``{"delta", "low", "high",
  "p_value"}`` with :math:`\delta = a - b` and the two-sided

  .. math::

      p = \frac{1 + \#\{b : |\delta_b - \delta| \ge |\delta|\}}{B + 1}.

* :func:`randomization` ``(M, permutations=10000, seed=0)`` — approximate randomization (Riezler and Maxwell 2005): an
  accumulator fed with both systems, ``from_model_output(predictions_a, predictions_b, references)``; permutation
  :math:`r` swaps example :math:`i`'s rows between the systems where ``swap_masks(ids, R, seed)[r, i]`` is 1, and
  :math:`p = (1 + \#\{r : |\delta_r| \ge |\delta|\}) / (R + 1)` (:mod:`metametric_jax.randomization`).

Both accumulators take a batch on three paths that give the same state for the same examples and ids: the host path
(Python structures); the callback path, ``decode=fn`` (and ``decode_references=``) with arrays, usable inside
``jax.jit`` through one ``jax.pure_callback`` (:mod:`metametric_jax.jit`; bit for bit the host path's); and the
device-native path, ``from_records`` with integer records (:mod:`metametric_jax.device`): the bootstrap's
``from_records(encoded, weights=None, *, example_ids)``, the randomization test's ``from_records(encoded_a,
encoded_b, weights=None, *, example_ids)`` with both systems encoded with one vocabulary (:func:`encode_systems`).
On the device, sums of integers (counts) equal the host's and other sums agree to float32 rounding.

The unit of resampling is the example given to ``from_model_output``: the document for coreference, the sentence for
NER, the graph pair for AMR. ``example_ids`` are integers (document or sentence indices; on the host all 64 bits
count, on the device they are int32), one per example and unique across the whole evaluation: an id given to two
examples of a call is refused, naming it, and so is a merge of two states that hold the same id (the
``np.arange(len(batch))`` slip: use global ids, offset by the batch start). That merge check is exact for states
built on the host (and on the device from concrete ids), which hold their ids beside the pytree; JAX transformations
drop them, so states that went through ``jit`` or ``pmap`` merge unchecked. When omitted, the ids are the running
position of the examples given to the class's ``from_model_output`` since it was made (or since
``reset_positions()``): the default for one stream; call ``reset_positions()`` before a second stream (another
system's examples) or pass ``example_ids``. :func:`bootstrap` and :func:`randomization` return the same class for
the same arguments, so their states merge (and share the running positions).

The state carries an order-independent fingerprint of its examples (it merges by addition): of the ids, and on the
host and callback paths of each example's reference too (a canonical 64-bit digest, the same in every process:
:func:`metametric_jax.resampling.reference_digests`). :func:`paired_bootstrap` refuses two systems scored on
different examples, and two systems whose references differ under the same ids (a system fed in another order under
the same ids). The device-native path fingerprints the ids only.

Example:
    >>> from metametric_jax import dsl, make_metric
    >>> Spans = make_metric(dsl.set_matching(dsl.discrete()), "f1", name="spans")
    >>> Boot = bootstrap(Spans, replicates=200, seed=1)
    >>> state = Boot.from_model_output([["a", "b"], ["c"], []], [["a"], ["c", "d"], ["e"]], example_ids=[0, 1, 2])
    >>> out = state.compute()
    >>> round(float(out["estimate"]["f1"]), 4), bool(out["low"]["f1"] <= out["estimate"]["f1"] <= out["high"]["f1"])
    (0.5714, True)
"""

from __future__ import annotations

from metametric_jax.bootstrap import BootstrapState, bootstrap, paired_bootstrap
from metametric_jax.randomization import RandomizationState, encode_systems, randomization
from metametric_jax.resampling import poisson_weights, swap_masks

__all__ = [
    "poisson_weights",
    "swap_masks",
    "bootstrap",
    "paired_bootstrap",
    "randomization",
    "encode_systems",
    "BootstrapState",
    "RandomizationState",
]
