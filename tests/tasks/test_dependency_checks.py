"""The at-once checks of a corpus side (``_all_checked``) against the checks of each sentence (``check_tree``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metametric_jax.errors import InputFormatError
from metametric_jax.tasks.dependency_checks import _all_checked, _check_heads, _columns, check_tree
from metametric_jax.tasks.dependency_counts import _Side
from metametric_jax.tasks.readers.conllu import DepSentence, DepToken, MultiwordToken, read_conllu


def _sentence(heads: list[int], ids: list[int] | None = None) -> DepSentence:
    ids = ids if ids is not None else list(range(1, len(heads) + 1))
    words = tuple(DepToken(i, f"w{i}", head=h, deprel="dep", line=k + 1) for k, (i, h) in enumerate(zip(ids, heads)))
    return DepSentence(words, source="t.conllu", line=1)


def _passes(check, sentences: list[DepSentence]) -> bool:
    try:
        for k, sentence in enumerate(sentences, start=1):
            check(sentence, k)
    except InputFormatError:
        return False
    return True


def _checked(sentences: list[DepSentence], check_trees: bool) -> bool:
    words = [w for s in sentences for w in s.words]
    columns = _columns(words)
    return _all_checked([len(s.words) for s in sentences], columns[0], columns[6], check_trees)


heads_of_sentence = st.integers(0, 7).flatmap(lambda n: st.lists(st.integers(-1, n + 1), min_size=n, max_size=n))


@settings(max_examples=300, deadline=None)
@given(st.lists(heads_of_sentence, min_size=0, max_size=4), st.booleans())
def test_all_checked_is_every_sentence_checked(corpus: list[list[int]], check_trees: bool) -> None:
    sentences = [_sentence(heads) for heads in corpus]
    each = _passes(check_tree if check_trees else _check_heads, sentences)
    assert _checked(sentences, check_trees) == each


@pytest.mark.parametrize(
    ("heads", "ids", "check_trees"),
    [
        ([2, 3, 1], None, True),  # a cycle without a root
        ([0, 3, 2], None, True),  # a root and a cycle beside it
        ([0, 1, 4, 3, 2], None, True),  # a cycle of two reached from a third word
        ([0, 0], None, True),  # two roots
        ([0, 1], [1, 3], False),  # ids out of order
        ([0, True], None, False),  # a HEAD that is a bool
        ([0, 1.0], None, False),  # a HEAD that is a float
        ([0, 3], None, False),  # a HEAD past the sentence
    ],
)
def test_all_checked_refuses(heads: list, ids: list[int] | None, check_trees: bool) -> None:
    sentence = _sentence(heads, ids)
    assert not _checked([_sentence([0, 1]), sentence], check_trees)


def test_side_reports_the_first_offending_sentence_in_file_order() -> None:
    # sentence 2 has an empty FORM (found while building), sentence 1 a cycle (found by the tree check): the side
    # names sentence 1, as checking each sentence in turn does
    cycle = _sentence([2, 1])
    words = (DepToken(1, "a", head=0, line=1), DepToken(2, "", head=1, line=2))
    empty_form = DepSentence(words, source="t.conllu", line=5)
    with pytest.raises(InputFormatError, match="sentence 1: expected a tree; found a cycle"):
        _Side([cycle, empty_form], True, True, "<references>")
    with pytest.raises(InputFormatError, match="sentence 2: expected a non-empty FORM"):
        _Side([_sentence([0, 1]), empty_form], True, True, "<references>")


_BUILT = ("text", "tokens", "token_where", "spans", "start", "end", "mwt", "form", "sentence_of", "head", "words")


def _both_builds(sentences: list[DepSentence]) -> tuple[_Side, _Side]:
    """The side built at once and by the reference build, sentence by sentence."""
    words = [w for s in sentences for w in s.words]
    at_once = object.__new__(_Side)
    at_once.sentences, at_once.name = sentences, "<references>"
    at_once._build_at_once(sentences, words, [len(s.words) for s in sentences], _columns(words))
    reference = object.__new__(_Side)
    reference.sentences, reference.name = sentences, "<references>"
    reference._build(sentences, True)
    return at_once, reference


@pytest.mark.parametrize(
    "name", ["gold", "pred-all", "pred-multiword", "pred-tokenization", "pred-sentences", "pred-tags", "pred-heads"]
)
def test_side_built_at_once_is_the_reference_build(name: str) -> None:
    sentences = read_conllu(Path(__file__).parent.parent / "data" / "dependency" / f"{name}.conllu")
    at_once, reference = _both_builds(sentences)
    for field in _BUILT:
        assert getattr(at_once, field) == getattr(reference, field), field


# a sentence: (form, head) words with multiword tokens over some runs of them, forms with spaces or none
word_forms = st.sampled_from(["a", "Bb", "c c", "\u00a0d", "é", "ΣΑΣ", "x\u2009y"])


@st.composite
def sentences_with_multiword(draw: st.DrawFn) -> DepSentence:
    n = draw(st.integers(1, 8))
    forms = [draw(word_forms) for _ in range(n)]
    words = tuple(
        DepToken(k, forms[k - 1], head=0 if k == 1 else 1, deprel="root" if k == 1 else "case", line=k + 10)
        for k in range(1, n + 1)
    )
    multiword, k = [], 1
    while k < n:
        if draw(st.booleans()):
            last = draw(st.integers(k + 1, n))
            line = draw(st.sampled_from([None, k + 5]))
            multiword.append(MultiwordToken(k, last, draw(st.sampled_from(["ab", "c d", "E"])), line=line))
            k = last + 1
        else:
            k += 1
    return DepSentence(words, tuple(multiword), source="t.conllu", line=draw(st.sampled_from([None, 3])))


@settings(max_examples=200, deadline=None)
@given(st.lists(sentences_with_multiword(), min_size=1, max_size=4))
def test_generated_side_built_at_once_is_the_reference_build(sentences: list[DepSentence]) -> None:
    at_once, reference = _both_builds(sentences)
    for field in _BUILT:
        assert getattr(at_once, field) == getattr(reference, field), field
