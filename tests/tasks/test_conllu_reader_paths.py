"""The CoNLL-U reader's common path against its general path (every line through the builder's checks).

:func:`parse_conllu` reads the common word line itself and hands every other line to the builder;
``conllu._parse_general`` hands it every line. On generated text, well formed or not, both must give the same
sentences (words, their lines, multiword tokens, comments, sentence lines) or the same error message.
"""

from __future__ import annotations

import random

import pytest

from metametric_jax.errors import InputFormatError
from metametric_jax.tasks.readers import conllu
from metametric_jax.tasks.readers.conllu import parse_conllu

FORMS = ("Dogs", "bark", "do", "n't", "a\u00a0b", "x y", "\u2003", "", "é", "\u200b", "_")
HEADS = ("0", "1", "2", "3", "01", "x", "-1", "99", "", "\u0661", "1000", "2.5")
IDS_BAD = ("0", "01", "x", "1.1", "2-1", "1-1", "", "\u0662")


def _word(ident: str, rng: random.Random, n: int) -> str:
    head = str(rng.randint(0, n)) if rng.random() < 0.8 else rng.choice(HEADS)
    form = rng.choice(FORMS[:4]) if rng.random() < 0.85 else rng.choice(FORMS)
    cols = [ident, form, "lemma", rng.choice(("NOUN", "VERB", "PUNCT")), "NN", "Number=Sing", head, "nsubj:pass"]
    cols += ["_", "SpaceAfter=No" if rng.random() < 0.2 else "_"]
    if rng.random() < 0.02:
        cols = cols[: rng.randint(1, 9)]
    elif rng.random() < 0.01:
        cols.append("extra")
    line = "\t".join(cols)
    return line.replace("\t", " ") if rng.random() < 0.01 else line


def _sentence(rng: random.Random) -> list[str]:
    n = rng.randint(1, 12)
    lines = [f"# sent_id = s{rng.randint(1, 99)}"] if rng.random() < 0.6 else []
    if rng.random() < 0.2:
        lines.append("# newdoc id = d")
    k = 1
    while k <= n:
        if k < n and rng.random() < 0.1:  # a multiword token over the next two or three words
            last = min(n, k + rng.randint(1, 2))
            lines.append("\t".join([f"{k}-{last}", rng.choice(FORMS[:4] + ("",)), *["_"] * 8]))
        if rng.random() < 0.05:
            lines.append("\t".join([f"{k}.1", "e", *["_"] * 8]))
        r = rng.random()
        ident = str(k) if r < 0.95 else str(k + rng.choice((-1, 1, 2, 4))) if r < 0.97 else rng.choice(IDS_BAD)
        lines.append(_word(ident, rng, n))
        if rng.random() < 0.01:
            lines.append("# a comment inside")
        k += 1
    return lines


def _text(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.randint(0, 6)):
        parts.append("\n".join(_sentence(rng)))
    sep = rng.choice(("\n\n", "\n\n\n", "\n \n", "\n\t\n"))
    text = sep.join(parts) + rng.choice(("", "\n", "\n\n"))
    if rng.random() < 0.1:
        text = text.replace("\n", "\r\n")
    if rng.random() < 0.05:
        text = "\ufeff" + text
    return text


def _outcome(parse, text: str):  # type: ignore[no-untyped-def]
    try:
        sentences = parse(text, "f.conllu")
    except InputFormatError as err:
        return ("error", str(err), err.line)
    return [
        (
            s.words,
            [w.line for w in s.words],
            [list(w.__dict__.items()) for w in s.words],
            s.multiword,
            [m.line for m in s.multiword],
            s.comments,
            s.source,
            s.line,
        )
        for s in sentences
    ]


@pytest.mark.parametrize("seed", range(6))
def test_common_path_equals_general_path_on_generated_text(seed: int) -> None:
    rng = random.Random(seed)
    errors = 0
    for _ in range(300):
        text = _text(rng)
        fast, general = _outcome(parse_conllu, text), _outcome(conllu._parse_general, text)
        assert fast == general, text
        errors += isinstance(fast, tuple)
    assert 0 < errors < 300  # both outcomes were exercised


def test_long_sentence_beyond_the_common_ids() -> None:
    n = conllu._FAST_IDS + 5
    rows = [f"{k}\tw{k}\t_\tX\t_\t_\t{0 if k == 1 else k - 1}\tdep\t_\t_" for k in range(1, n + 1)]
    text = "\n".join(rows) + "\n"
    [s] = parse_conllu(text)
    assert [w.id for w in s.words] == list(range(1, n + 1))
    assert [w.head for w in s.words][-1] == n - 1
    assert _outcome(parse_conllu, text) == _outcome(conllu._parse_general, text)
    bad = text.replace(f"\n{n}\tw{n}\t", f"\n{n + 1}\tw{n}\t")
    assert _outcome(parse_conllu, bad) == _outcome(conllu._parse_general, bad)
    assert _outcome(parse_conllu, bad)[0] == "error"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("1\tx\t_\t_\t_\t_\t01\tdep\t_\t_", None),  # a HEAD with a leading zero: accepted as 1 by both paths
        ("1\tx\t_\t_\t_\t_\tx\tdep\t_\t_", "expected HEAD to be a word id or 0; found 'x'"),
        ("1\t\u00a0\t_\t_\t_\t_\t0\tdep\t_\t_", "expected a non-empty FORM; found '\\xa0'"),
        ("1\tx y\t_\t_\t_\t_\t0\troot\t_\t_", None),  # a space inside a form: kept, as the general path keeps it
        ("1\tx\t_\t_\t_\t_\t2\troot\t_\t_", "expected HEAD between 0 and 1 (the sentence has 1 words); found 2"),
    ],
)
def test_lines_off_the_common_path(line: str, message: str | None) -> None:
    text = line + "\n"
    fast, general = _outcome(parse_conllu, text), _outcome(conllu._parse_general, text)
    assert fast == general
    if message is None:
        assert not isinstance(fast, tuple)
    else:
        assert isinstance(fast, tuple) and message in fast[1]


def test_ids_counted_again_in_each_sentence() -> None:
    row = "{}\tw\t_\tX\t_\t_\t{}\tdep\t_\t_"
    first = [row.format(1, 0), row.format(2, 1), row.format(3, 1)]
    # the second sentence skips from word 1 to word 4, the id that would follow the first sentence's words
    text = "\n".join([*first, "", row.format(1, 0), row.format(4, 1)]) + "\n"
    outcome = _outcome(parse_conllu, text)
    assert outcome == _outcome(conllu._parse_general, text)
    assert outcome == ("error", "f.conllu:6: expected word id 2; found '4'", 6)
    # and after a line the builder read (a multiword range), the next id is the builder's count
    text = "\n".join([row.format(1, 0), "2-3\tab\t_\t_\t_\t_\t_\t_\t_\t_", row.format(2, 1), row.format(4, 1)]) + "\n"
    assert _outcome(parse_conllu, text) == _outcome(conllu._parse_general, text)
    assert _outcome(parse_conllu, text)[0] == "error"


def test_repeated_tags_and_lemmas_share_one_string() -> None:
    """Both paths keep one string per distinct LEMMA, UPOS, XPOS, FEATS and DEPREL (memory of large files)."""
    line = "{}\tdogs\tdog\tNOUN\tNNS\tNumber=Plur\t0\troot\t_\t_\n"
    text = "".join(line.format(1) + "\n" for _ in range(3))
    words = [s.words[0] for s in parse_conllu(text)]
    assert len(words) == 3
    for name in ("lemma", "upos", "xpos", "feats", "deprel"):
        first = getattr(words[0], name)
        assert all(getattr(w, name) is first for w in words), name
    general = [s.words[0] for s in conllu._parse_general(text)]  # every line through the builder's checks
    assert words == general
    for name in ("lemma", "upos", "xpos", "feats", "deprel"):
        assert all(getattr(w, name) is getattr(words[0], name) for w in general), name
