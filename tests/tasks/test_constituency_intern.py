"""The interning of labels and tags (``_intern``), the comparison of words (``_words_equal``) and the UTF-8 check of
the tree reader, on generated strings."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metametric_jax.errors import InputFormatError
from metametric_jax.tasks.constituency_counts import _intern, _padded, _words_equal
from metametric_jax.tasks.readers.ptb import scan_trees

# short and long strings (up to 15 bytes take the hashed path, longer ones the dictionary), some differing only in
# their last byte, their length or their trailing zero bytes, some not ASCII, some with white space or parentheses
# (no token has them, but the interning holds for any bytes)
strings = st.lists(
    st.one_of(
        st.sampled_from(["NP", "NN", "NNS", "NP-SBJ", "ABCDEFGH", "ABCDEFGI", "ABCDEFG", "", "é", "ABCDEFGHIJKLMNOP"]),
        st.sampled_from(
            ["ABCDEFG\t", "ABCDEFG ", "ABCDEFG(", "ABCDEFG)", "ABCDEF", "ABCDEF\t", "\x00", "\x00\x00", "ABCDEFGHIJ\t"]
        ),
        st.text(alphabet="abcAB-=é0", max_size=24),
        st.text(alphabet="a\t\n ()\x00", max_size=10),
    ),
    min_size=0,
    max_size=40,
)


@settings(max_examples=200, deadline=None)
@given(strings)
def test_intern_gives_each_distinct_string_one_code(items: list[str]) -> None:
    encoded = [s.encode("utf-8") for s in items]
    buffer = np.frombuffer(b"(" + b" ".join(encoded) + b")", dtype=np.uint8)
    starts, at = [], 1
    for e in encoded:
        starts.append(at)
        at += len(e) + 1
    start = np.asarray(starts, dtype=np.int64)
    end = start + np.asarray([len(e) for e in encoded], dtype=np.int64)
    codes, vocab = _intern(buffer, start, end)
    assert len(vocab) == len(set(vocab)) == len(set(encoded))
    assert [vocab[c] for c in codes.tolist()] == encoded


# words alike in their first eight bytes, lengths or trailing zero bytes, and arbitrary ones
word = st.one_of(
    st.sampled_from(["ABCDEFGH", "ABCDEFGI", "ABCDEFG", "ABCDEFGHIJKLMNOPQ", "ABCDEFGHIJKLMNOPR", "", "\x00", "é"]),
    st.text(alphabet="abAB-\x00é", max_size=24),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(word, word), max_size=40))
def test_words_equal_is_byte_equality(pairs: list[tuple[str, str]]) -> None:
    left = [a.encode("utf-8") for a, _ in pairs]
    right = [b.encode("utf-8") if k % 3 else a.encode("utf-8") for k, (a, b) in enumerate(pairs)]  # a third equal
    words = [*left, *right]
    sizes = np.array([len(w) for w in words], dtype=np.int64)
    starts = np.cumsum(sizes + 1) - (sizes + 1)  # one byte after each word: what follows it never counts
    _, windows = _padded(np.frombuffer(b"".join(w + b"(" for w in words), dtype=np.uint8))
    n = len(left)
    same = _words_equal(windows, starts[:n], starts[:n] + sizes[:n], starts[n:], starts[n:] + sizes[n:])
    assert same.tolist() == [a == b for a, b in zip(left, right)]


def test_intern_tells_apart_strings_alike_in_their_first_eight_bytes_zero_padded() -> None:
    # strings whose first eight bytes, zero-padded, are alike: their lengths and later bytes tell them apart
    encoded = [b"ABCDEFGH"[:n] for n in range(8)]
    encoded += [b"ABCDEFGH"[:7] + bytes([last]) for last in (9, 10, 11, 12, 13, 32, 40, 41, 72)]
    encoded += [b"ABCDEFGH"[:n] + b"\x00" * (7 - n) + bytes([last]) for n in range(8) for last in (9, 32, 41)]
    encoded += [b"ABCDEFGHIJ"[:n] + b"\x00" * k for n in (8, 9, 10) for k in range(7)]  # lengths 8 to 16
    buffer = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    end = np.cumsum([len(e) for e in encoded])
    codes, vocab = _intern(buffer, end - [len(e) for e in encoded], end)
    assert len(vocab) == len(set(encoded)) and [vocab[c] for c in codes.tolist()] == encoded


def test_reader_checks_utf8_only_where_a_byte_is_not_ascii() -> None:
    bank = scan_trees("(S (NN café) (NN x))\n".encode(), "t.mrg")
    assert bank.text(bank.word_start, bank.word_end) == ["café", "x"]
    with pytest.raises(InputFormatError, match="t.mrg:2"):
        scan_trees(b"(S (NN a))\n(S (NN caf\xe9))\n", "t.mrg")


@pytest.mark.parametrize("distinct", [300, 3000, 20000])
def test_intern_widens_its_table_on_collisions(distinct: int) -> None:
    """Hundreds to tens of thousands of distinct strings: buckets collide at 2**16 and the table widens (2**20,
    2**24), or the strings go to the dictionary; every code still names its string."""
    rng = np.random.default_rng(distinct)
    alphabet = np.frombuffer(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP-=", dtype=np.uint8)
    words = sorted({alphabet[rng.integers(0, alphabet.size, rng.integers(1, 16))].tobytes() for _ in range(distinct)})
    items = [words[k] for k in rng.integers(0, len(words), 3 * len(words))]
    buffer = np.frombuffer(b" ".join(items), dtype=np.uint8)
    sizes = np.array([len(w) for w in items], dtype=np.int64)
    start = np.cumsum(sizes + 1) - (sizes + 1)
    codes, vocab = _intern(buffer, start, start + sizes)
    assert len(vocab) == len(set(items)) and [vocab[c] for c in codes.tolist()] == items
