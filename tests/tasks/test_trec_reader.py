"""TREC runs already in trec_eval's order are read without sorting, with the same rankings as line by line."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest

from metametric_jax.errors import InputFormatError
from metametric_jax.ranking import rank
from metametric_jax.tasks.readers import trec as trec_reader
from metametric_jax.tasks.readers.trec import parse_run


def _line_by_line(monkeypatch: pytest.MonkeyPatch, text: str) -> trec_reader.Run:
    with monkeypatch.context() as patched:
        patched.setattr(trec_reader, "_bulk_run", lambda text: None)
        return parse_run(text)


def _in_order_of(text: str) -> bool:
    fields = trec_reader._fields(text, 6)
    assert fields is not None
    names = fields.strings(0)
    queries, first, query_of = np.unique(names, return_index=True, return_inverse=True)
    place = np.empty_like(first)
    place[np.argsort(first)] = np.arange(first.size)
    scores = fields.numbers(4)
    return trec_reader._in_order(place[query_of], scores) and trec_reader._ties_descending(names, scores, fields)


def _run(seed: int) -> dict[str, dict[str, float]]:
    rng = random.Random(seed)
    names = [f"d{n}" for n in range(50)] + ["a" * 8, "a" * 9, "a" * 16, "a" * 17, "D7", "d7x", "z"]
    return {
        f"q{q}": {
            d: rng.choice([0.5, -0.0, 0.0, 1.0, -2.25, rng.random()]) for d in rng.sample(names, rng.randint(1, 40))
        }
        for q in rng.sample(range(100), 15)
    }


def _text(run: dict[str, dict[str, float]], order: dict[str, list[str]]) -> str:
    return "".join(f"{q} Q0 {d} {i} {run[q][d]!r} r\n" for q in run for i, d in enumerate(order[q], 1))


@pytest.mark.parametrize("seed", range(8))
def test_a_run_in_trec_eval_order_is_read_unsorted(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    run = _run(seed)
    text = _text(run, {q: rank(scored) for q, scored in run.items()})
    assert _in_order_of(text)
    got = parse_run(text)
    assert got == _line_by_line(monkeypatch, text)
    assert got.rankings == {q: rank(scored) for q, scored in run.items()}


@pytest.mark.parametrize("seed", range(8))
def test_a_run_out_of_order_is_sorted(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    run = _run(seed)
    rng = random.Random(seed)
    order = {q: rank(scored) for q, scored in run.items()}
    ties = [(q, i) for q, docs in order.items() for i in range(len(docs) - 1) if run[q][docs[i]] == run[q][docs[i + 1]]]
    if ties:  # a tie broken by document id ascending, as many systems write it
        q, i = rng.choice(ties)
        order[q][i], order[q][i + 1] = order[q][i + 1], order[q][i]
    text = _text(run, order)
    assert _in_order_of(text) == (not ties)
    assert parse_run(text) == _line_by_line(monkeypatch, text)
    assert parse_run(text).rankings == {q: rank(scored) for q, scored in run.items()}


@pytest.mark.parametrize(
    "text",
    [
        "q Q0 d1 1 2 r\nq Q0 d2 2 1 r\np Q0 d1 1 1 r\nq Q0 d3 3 0.5 r\n",  # a query's lines apart
        "q Q0 d1 1 1 r\nq Q0 d2 2 2 r\n",  # scores ascending
        "q Q0 d1 1 1 r\nq Q0 d2 2 1 r\n",  # a tie by document id ascending
        "q Q0 d2 1 -0 r\nq Q0 d1 2 0 r\nq Q0 aaaaaaaab 3 0 r\n",  # -0 ties 0 (in order)
    ],
)
def test_order_checks(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    assert _in_order_of(text) == text.startswith("q Q0 d2 1 -0")
    assert parse_run(text) == _line_by_line(monkeypatch, text)


def test_a_document_ranked_twice_in_order_is_an_error() -> None:
    with pytest.raises(InputFormatError, match="ranked twice"):
        parse_run("q Q0 d2 1 1 r\nq Q0 d1 2 0.5 r\nq Q0 d1 3 0.5 r\n", "r.txt")


@pytest.mark.parametrize("together", [True, False])
def test_qrels_in_bulk_as_line_by_line(monkeypatch: pytest.MonkeyPatch, together: bool) -> None:
    rng = random.Random(int(together))
    lines = [
        f"q{q} 0 d{d} {rng.choice([-1, 0, 1, 2])}" for q in rng.sample(range(30), 12) for d in rng.sample(range(40), 9)
    ]
    if not together:
        rng.shuffle(lines)
    text = "\n".join(lines) + "\n"
    with monkeypatch.context() as patched:
        patched.setattr(trec_reader, "_bulk_qrels", lambda text: None)
        expected = trec_reader.parse_qrels(text)
    got = trec_reader._bulk_qrels(text)
    assert got == expected and list(got) == list(expected)
    assert all(list(got[q]) == list(expected[q]) for q in got)
    for twice in ("\n".join([*lines[:4], lines[3], *lines[4:]]), text + lines[3]):  # a document judged twice
        assert trec_reader._bulk_qrels(twice) is None
        with pytest.raises(InputFormatError, match="judged twice"):
            trec_reader.parse_qrels(twice)


@pytest.mark.parametrize("sliced", [0, 4, 1 << 30], ids=["sliced", "by width", "gathered"])
def test_fields_cut_as_split(monkeypatch: pytest.MonkeyPatch, sliced: int) -> None:
    monkeypatch.setattr(trec_reader, "_SLICED", sliced)  # the fields sliced one by one, or gathered in bulk
    text = "q1 a\tbb\r\n\nq22  c d\nq3 e ffff\nq4444444 msmarco_v2.1_doc_19_4624301049#19_3195777577 g"
    fields = trec_reader._fields(text, 3)  # the last field ends the text
    assert fields is not None
    lines = [line.split() for line in text.split("\n") if line.split()]
    for k in range(3):
        assert fields.cut(k) == [line[k] for line in lines]
        rows = np.array([3, 0, 2])
        assert fields.cut(k, rows) == [lines[r][k] for r in rows.tolist()]
        assert fields.cut(k, np.array([], np.int64)) == []


@pytest.mark.parametrize(
    "text",
    [
        "q1 Q0 d1 1 0.5 r\nq1 Q0 d2 2 0.25 r\n",
        "q1 Q0 msmarco_v2.1_doc_19_4624301049#19_3195777577 1 0.9734382274129786 a\nq1 Q0 d 2 0.5 bbbbbbbbbbbbbbbb",
        "q Q0 d 1 1 r",  # every field within the widest field's width of the end
        "q Q0 d 1 1 r\n" * 3 + "q Q0 " + "e" * 60 + " 1 1 r",  # a field wider than the rest of the text after most
    ],
)
def test_fields_chars_as_split(text: str) -> None:
    """Rows copied from a sliding window, and the rows near the end gathered byte by byte: the fields' bytes."""
    fields = trec_reader._fields(text, 6)
    assert fields is not None
    lines = [line.split() for line in text.splitlines()]
    for k in range(6):
        assert fields.strings(k).tolist() == [line[k].encode() for line in lines]
        for multiple in (1, 8):
            chars = fields.chars(k, multiple)
            assert chars.shape[1] % multiple == 0 and chars.flags.writeable
            assert [bytes(row).rstrip(b"\0") for row in chars] == [line[k].encode() for line in lines]
        rows = np.arange(len(lines))[::-1]
        assert fields.strings(k).tolist()[::-1] == [bytes(r).rstrip(b"\0") for r in fields.chars(k, rows=rows)]
        assert fields.chars(k, rows=np.array([], np.int64)).shape[0] == 0


def _tie_broken_ascending(seed: int) -> str | None:
    """A run in trec_eval's order but for one tie, whose two lines are in ascending document order."""
    run = _run(seed)
    order = {q: rank(scored) for q, scored in run.items()}
    for q, docs in order.items():
        for i in range(len(docs) - 1):
            if run[q][docs[i]] == run[q][docs[i + 1]]:
                docs[i], docs[i + 1] = docs[i + 1], docs[i]
                return _text(run, order)
    return None


@pytest.mark.parametrize("block", [1, 40, 300, 1 << 40])
def test_files_read_in_blocks_as_line_by_line(monkeypatch: pytest.MonkeyPatch, block: int) -> None:
    """Blocks of one line, of a few lines, of many and the whole file: the same run and judgements.

    With blocks of one line every tie of a query's adjacent lines straddles two blocks.
    """
    texts = []
    for seed in range(6):
        run = _run(seed)
        texts.append(_text(run, {q: rank(scored) for q, scored in run.items()}))
        texts.append(_text(run, {q: rank(scored)[::-1] for q, scored in run.items()}))
        tie = _tie_broken_ascending(seed)
        assert tie is not None
        texts.append(tie)
    texts.append("\n\n" + texts[0].replace("\n", "\n\n", 3) + "\n")  # blank lines, blocks without a line
    qrels = ["".join(f"q{q} 0 d{d} {(q * d) % 3 - 1}\n" for q in range(9) for d in range(q, 40, 3)), "", "\n\n"]
    expected = [_line_by_line(monkeypatch, text) for text in texts]
    with monkeypatch.context() as patched:
        patched.setattr(trec_reader, "_bulk_qrels", lambda text: None)
        judged = [trec_reader.parse_qrels(text) for text in qrels]
    monkeypatch.setattr(trec_reader, "_BLOCK", block)
    for text, want in zip(texts, expected):
        assert trec_reader._bulk_run(text) == want
    for text, want in zip(qrels, judged):
        got = trec_reader._bulk_qrels(text)
        assert got == want and list(got) == list(want)
    assert trec_reader._bulk_run("") == trec_reader.Run({}, "")
    assert trec_reader._bulk_run(texts[0] + "#c\n") is None  # a comment: line by line
    lines = ["ab\n", "cd\n", "\n", "ef"]
    assert list(trec_reader._blocks("".join(lines))) == (lines if block == 1 else ["".join(lines)])


@pytest.mark.parametrize("seed", range(5))
def test_unique_names_as_numpy_unique(seed: int) -> None:
    """Names in runs of equal ones (each query's lines together or not): ``np.unique``'s three arrays."""
    rng = random.Random(seed)
    runs = [(rng.choice([b"q1", b"q10", b"q2", b"a", b"zz"]), rng.randint(1, 4)) for _ in range(rng.randint(0, 30))]
    names = np.array([name for name, k in runs for _ in range(k)], dtype="S3")
    got = trec_reader._unique(names)
    want = np.unique(names, return_index=True, return_inverse=True)
    for a, b in zip(got, want):
        assert a.tolist() == b.tolist() and a.shape == b.shape


def test_grades_read_in_bulk_as_int_parses_them() -> None:
    grades = ["0", "1", "-1", "+2", "007", "-0", "123456789012345678", "-99", "4"]
    text = "".join(f"q{i % 2} 0 d{i} {g}\n" for i, g in enumerate(grades))
    fields = trec_reader._fields(text, 4)
    assert fields is not None
    parsed = trec_reader._integers(fields.chars(3))
    assert parsed is not None and parsed.tolist() == [int(g) for g in grades]
    expected = {f"q{q}": {f"d{i}": int(g) for i, g in enumerate(grades) if i % 2 == q} for q in (0, 1)}
    assert trec_reader._bulk_qrels(text) == expected
    for odd in ("1_0", "1.0", "-", "5-", "+-5", "1234567890123456789"):  # left to the line-by-line reading
        fields = trec_reader._fields(f"q 0 d {odd}\n", 4)
        assert fields is not None and trec_reader._integers(fields.chars(3)) is None
        assert trec_reader._bulk_qrels(f"q 0 d {odd}\n") is None
    assert trec_reader.parse_qrels("q 0 e 1234567890123456789\n") == {"q": {"e": 1234567890123456789}}
    for odd in ("1_0", "1.0", "٢"):  # int() takes 1_0 and other scripts' digits; trec_eval's atol reads them otherwise
        with pytest.raises(InputFormatError, match="<string>:1: expected an integer grade"):
            trec_reader.parse_qrels(f"q 0 d {odd}\n")


def test_short_decimals_read_in_bulk_as_float_parses_them() -> None:
    """Signs, no integer part, no fraction, a bare point, leading and trailing zeros: float()'s bits in bulk."""
    rng = random.Random(8)
    scores = ["0.5", ".5", "5.", "-0.0", "+0", "-.5", "+.25", "000123.4500", "999999999999999", "0.000000000000001"]
    for _ in range(20000):
        whole = str(rng.randint(0, 10 ** rng.randint(0, 8))) if rng.random() < 0.9 else ""
        fraction = "".join(rng.choice("0123456789") for _ in range(rng.randint(0, 7)))
        score = rng.choice(["", "-", "+"]) + whole + ("." + fraction if fraction or rng.random() < 0.2 else "")
        scores.append(score if any(c.isdigit() for c in score) else score + "1")
    fields = trec_reader._fields("".join(f"q Q0 d{i} {i} {s} r\n" for i, s in enumerate(scores)), 6)
    assert fields is not None
    assert [v.hex() for v in fields.numbers(4).tolist()] == [float(s).hex() for s in scores]


def _columns(texts: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The bytes of ``texts`` joined with spaces, and each one's start and end offsets."""
    encoded = [t.encode() for t in texts]
    lengths = np.array([len(e) for e in encoded], np.int64)
    start = np.concatenate(([0], np.cumsum(lengths + 1)[:-1])).astype(np.int64)
    return np.frombuffer(b" ".join(encoded) + b"\n", np.uint8), start, start + lengths


def _near_halfway(rng: random.Random, count: int) -> list[str]:
    """Decimals of 17 to 19 significant digits next to the midpoint of two neighbouring doubles (double roundings)."""
    from decimal import Decimal, localcontext

    out = []
    with localcontext() as context:
        context.prec = 80
        for _ in range(count):
            x = rng.random() * 10.0 ** rng.randint(-3, 4)
            middle = (Decimal(x) + Decimal(float(np.nextafter(x, np.inf)))) / 2
            out += [format(middle, f".{digits}g") for digits in (17, 18, 19)]
    return [s for s in out if "e" not in s]


def _decimal_texts(seed: int) -> dict[str, list[str]]:
    rng = random.Random(seed)
    forms = ["0.5", ".5", "5.", "-0.0", "+0", "-.5", "+.25", "000123.4500", "999999999999999", "1", "-7", "12345678"]
    forms += ["0.000000000000000000000000001", "9999999999999999999", "18446744073709551616", "4503599627370497.5"]
    drawn = []
    for _ in range(4000):  # 1 to 22 digits, the point anywhere or nowhere, signs
        digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 22)))
        cut = rng.randint(0, len(digits))
        text = digits[:cut] + "." + digits[cut:] if rng.random() < 0.9 else digits
        drawn.append(rng.choice(["", "", "-", "+"]) + text)
    return {
        "forms": forms,
        "drawn": drawn,
        "full": [t for t in (repr(rng.random() * 10.0 ** rng.randint(-3, 6)) for _ in range(4000)) if "e" not in t],
        "few": [f"{rng.random():.{rng.randint(1, 6)}f}" for _ in range(2000)],
        "halfway": _near_halfway(rng, 2000),
    }


@pytest.mark.parametrize("extended", [True, False], ids=["long double", "double only"])
def test_decimals_parsed_in_bulk_are_float_bit_for_bit(monkeypatch: pytest.MonkeyPatch, extended: bool) -> None:
    """Plain decimals read eight digits at a time: float()'s bits, double roundings included; the rest left out."""
    if extended and not trec_reader._EXTENDED:
        pytest.skip(f"this machine's long double has {np.finfo(np.longdouble).nmant} bits of fraction, not 63 or 112")
    monkeypatch.setattr(trec_reader, "_EXTENDED", extended)
    groups = _decimal_texts(11)
    texts = [t for group in groups.values() for t in group]
    data, start, end = _columns(texts)
    values, parsed = trec_reader._decimals(data, start, end)
    wrong = [t for t, v, p in zip(texts, values.tolist(), parsed.tolist()) if p and v.hex() != float(t).hex()]
    assert not wrong
    read = dict(zip(texts, parsed.tolist()))
    short = [t for t in texts if len(t.strip("+-").replace(".", "").lstrip("0")) <= 15 and len(t.strip("+-")) <= 19]
    assert all(read[t] for t in short)  # every decimal of 15 significant digits or fewer, 19 characters: in bulk
    long = [t for t in groups["full"] if len(t.strip("+-").replace(".", "").lstrip("0")) >= 17]
    assert len(long) > len(groups["full"]) // 5
    if extended:  # full precision: in bulk where the long double has 64 bits, but for rare double roundings
        assert sum(read[t] for t in long) >= 0.99 * len(long)
    else:  # 17 significant digits or more: left to float()
        assert not any(read[t] for t in texts if len(t.strip("+-").replace(".", "").lstrip("0")) >= 17)
    fields = trec_reader._fields("".join(f"q Q0 d{i} {i} {t} r\n" for i, t in enumerate(texts)), 6)
    assert fields is not None
    assert [v.hex() for v in fields.numbers(4).tolist()] == [float(t).hex() for t in texts]


def test_decimals_leave_other_forms_to_float() -> None:
    odd = ["1e5", "inf", "nan", "1_0", ".", "-", "+", "1.2.3", "..5", "5..", "+-1", "1-", "0x10", "1.5e-3", "-.", "1,5"]
    odd += ["0.12345678901234567890123", "12345678901234567890", "1" + "0" * 31 + "1", "1234567.1234567.1"]
    odd += ["0.1234567.1234567", "12345678901234567890123456.5", "." + "1" * 30, "0." + "0" * 27 + "1", "1" + "0" * 24]
    odd += ["1" + "0" * 23 + ".5", "１", "٣.٥"]
    data, start, end = _columns(odd)
    _, parsed = trec_reader._decimals(data, start, end)
    assert not parsed.any()
    decimal = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")  # what trec_eval's atof reads whole
    for text in odd[:-2]:  # as float() takes each decimal number (in ASCII), refusing other forms
        fields = trec_reader._fields(f"q Q0 d 1 {text} r\n", 6)
        assert fields is not None
        if decimal.fullmatch(text) is None:
            with pytest.raises(ValueError):
                fields.numbers(4)
        else:
            assert fields.numbers(4)[0] == float(text)


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        ("q Q0 d 1 1 r\n\n\nq Q0 e 2 0.5 r", True),  # blank lines, no newline at the end
        ("  q Q0 d 1 1 r \r\n\tq Q0 e 2 0.5 r\r\n", True),  # white space around, CRLF
        ("q Q0 d\n1 1 r\n", False),  # a row over two lines
        ("q Q0 d 1 1 r q Q0 e 2 1 r\n", False),  # two rows on one line (one line of 12 fields)
        ("q Q0 d 1 1 r q Q0\ne 2 1 r\n", False),
        ("q Q0 d 1\n1 r q Q0 e 2 1\nr\n", False),
        ("#q Q0 d 1 1 r\nq Q0 e 2 1 r\n", False),  # a comment
        ("q Q0 d 1 1 r\n  #q Q0 e 2 1 r\n", False),  # not a comment, left to line by line all the same
    ],
)
def test_fields_in_bulk_only_one_row_a_line(monkeypatch: pytest.MonkeyPatch, text: str, plain: bool) -> None:
    fields = trec_reader._fields(text, 6)
    assert (fields is not None) == plain
    if fields is not None:
        lines = [line.split() for line in text.split("\n") if line.split()]
        assert [fields.cut(k) for k in range(6)] == [[line[k] for line in lines] for k in range(6)]
    try:
        expected: trec_reader.Run | str = _line_by_line(monkeypatch, text)
    except InputFormatError as err:
        expected = str(err)
    try:
        got: trec_reader.Run | str = parse_run(text)
    except InputFormatError as err:
        got = str(err)
    assert got == expected
    qrels = (
        text.replace(" Q0 ", " 0 ")
        .replace(" r", "")
        .replace(" 1 1", " 1")
        .replace(" 2 0.5", " 2")
        .replace(" 2 1", " 2")
    )
    assert (trec_reader._fields(qrels, 4) is not None) == plain
