"""The interning of labels and tags (``_intern``) and the UTF-8 check of the tree reader, on generated strings."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metametric_jax.errors import InputFormatError
from metametric_jax.tasks.constituency_counts import _intern
from metametric_jax.tasks.readers.ptb import scan_trees

# short and long strings (up to 15 bytes take the hashed path, longer ones the dictionary), some differing only in
# their last byte or in their length, some not ASCII
strings = st.lists(
    st.one_of(
        st.sampled_from(["NP", "NN", "NNS", "NP-SBJ", "ABCDEFGH", "ABCDEFGI", "ABCDEFG", "", "é", "ABCDEFGHIJKLMNOP"]),
        st.text(alphabet="abcAB-=é0", max_size=24),
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


def test_reader_checks_utf8_only_where_a_byte_is_not_ascii() -> None:
    bank = scan_trees("(S (NN café) (NN x))\n".encode(), "t.mrg")
    assert bank.text(bank.word_start, bank.word_end) == ["café", "x"]
    with pytest.raises(InputFormatError, match="t.mrg:2"):
        scan_trees(b"(S (NN a))\n(S (NN caf\xe9))\n", "t.mrg")
