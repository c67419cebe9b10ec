"""The CoNLL-2012 reader's two paths: the bulk reading of plain files gives what the line-by-line reader gives.

``read_conll2012`` reads a plain file in one pass over its bytes and falls back to :func:`parse_conll2012` (line by
line) for anything else; the line-by-line reader is the oracle here, on the project's files and on generated files
with nested, repeated and multi-part mentions, bare numbers, words with non-ASCII letters, and one-character
mutations (whose errors must name the same line with the same message). ``documents_of_spans`` builds the documents
that ``CorefDocument.from_clusters`` builds.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from metametric_jax.errors import InputFormatError
from metametric_jax.tasks.coref_documents import CorefDocument, Mention, documents_of_spans
from metametric_jax.tasks.readers import conll2012, conll2012_bulk, conll2012_format
from metametric_jax.tasks.readers.conll2012 import parse_conll2012, read_conll2012
from metametric_jax.tasks.readers.text import read_text, split_lines

ROOT = Path(__file__).resolve().parents[3]
FILES = sorted(
    [
        *(ROOT / "tests" / "data" / "coref").glob("*.key"),
        *(ROOT / "tests" / "data" / "coref").glob("*.response"),
        *(ROOT / "tests" / "data" / "conll2012-scorer-tests").glob("TC-*"),
        *(ROOT / "metametric_jax" / "data" / "coref").glob("sample.*"),
    ]
)


def _read(read, *args):  # noqa: ANN001, ANN202
    """What a reader gives, or the message of its error."""
    try:
        return read(*args)
    except InputFormatError as err:
        return str(err)


@pytest.fixture(autouse=True)
def _bulk_for_every_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """Short texts read in bulk too (``read_conll2012`` reads them line by line), so that these tests try it."""
    monkeypatch.setattr(conll2012, "_BULK_FROM", 0)


def _both(path: Path) -> tuple[object, object]:
    """The documents (or error) of the file by ``read_conll2012`` and by the line-by-line reader."""
    return _read(read_conll2012, path), _read(parse_conll2012, split_lines(read_text(path)), str(path))


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_project_files_read_in_bulk_as_line_by_line(path: Path) -> None:
    assert conll2012_bulk.parse_bulk(read_text(path), str(path)) is not None  # the bulk path is the one tested
    bulk, lines = _both(path)
    assert bulk == lines


def _document(rng: random.Random, name: str) -> list[str]:
    n = rng.randint(1, 30)
    columns: list[list[str]] = [[] for _ in range(n)]
    for _ in range(rng.randint(0, 20)):
        a = rng.randrange(n)
        b = rng.randrange(a, min(n, a + rng.choice([1, 3, 10])))
        e = rng.choice(["0", "1", "2", "12", "01"])
        if a == b and rng.random() < 0.6:
            columns[a].append(f"({e})")
        else:
            columns[a].append(f"({e}")
            columns[b].append(f"{e})")
    lines = [f"#begin document ({name}); part 000"]
    for t, parts in enumerate(columns):
        rng.shuffle(parts)
        column = "|".join(parts) if parts else rng.choice(["-", "-", "_"])
        if rng.random() < 0.05:
            column += "|7"  # a bare number
        if rng.random() < 0.1:
            lines.append(rng.choice(["", "  ", "\t\r"]))
        word = rng.choice(["w", "Ωmega", "é", "x-y"])
        lines.append(
            rng.choice(
                [f"{name} 0 {t} {word} {column}", f"{name}\t{column}", f"{name}\t0\t{t}\t{word}\t_\t_\t{column}\r"]
            )
        )
    lines.append("#end document")
    return lines


@pytest.mark.parametrize("seed", range(4))
def test_generated_files_read_as_line_by_line(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    path = tmp_path / "f.conll"
    kinds = {"bulk": 0, "error": 0}
    for _ in range(150):
        lines = [line for k in range(rng.randint(1, 3)) for line in _document(rng, f"d{k}")]
        if rng.random() < 0.2:
            lines.insert(rng.randrange(len(lines) + 1), rng.choice(["# a comment", "  # indented", "stray -"]))
        if rng.random() < 0.3:  # one character added somewhere
            i = rng.randrange(len(lines))
            j = rng.randrange(len(lines[i]) + 1)
            extra = rng.choice(["(", ")", "3)", "(4", "|", "#", " ", "\xa0", "x"])
            lines[i] = lines[i][:j] + extra + lines[i][j:]
        path.write_bytes(("\n".join(lines) + rng.choice(["\n", ""])).encode("utf-8"))
        bulk, by_line = _both(path)
        assert bulk == by_line
        kinds["error"] += isinstance(by_line, str)
        kinds["bulk"] += conll2012_bulk.parse_bulk(read_text(path), str(path)) is not None
    assert kinds["bulk"] > 50 and kinds["error"] > 10  # both paths, and errors, are exercised


@pytest.mark.parametrize(
    "text",
    [
        "\ufeff\ufeff#begin document (d)\nd 0 0 w (1)\n#end document\n",  # a second byte order mark
        "#begin document (d)\nd 0 0 w\xa0x (1)\n#end document\n",  # white space beyond ASCII
        "#begin document (d)\n#token 0 0 w (1)\n#end document\n",  # a token line that starts with '#'
        "  # comment\n#begin document (d)\nd 0 0 w (1)\n#end document\n",  # an indented comment outside documents
    ],
)
def test_files_that_are_not_plain_are_read_line_by_line(tmp_path: Path, text: str) -> None:
    path = tmp_path / "f.conll"
    path.write_bytes(text.encode("utf-8"))
    assert conll2012_bulk.parse_bulk(read_text(path), str(path)) is None
    bulk, lines = _both(path)
    assert bulk == lines and not isinstance(bulk, str)


def test_documents_of_spans_are_from_clusters() -> None:
    docs = [([[(0, 1), (5, 5)], [(3, 3), (0, 1)]], "a", 0), ([], "b", None), ([[(2, 4)]], "c", 1)]
    built = documents_of_spans(docs)
    assert built == [CorefDocument.from_clusters(c, name=n, part=p) for c, n, p in docs]
    assert built[0].entities[1].mentions[1] is built[0].entities[0].mentions[0]  # one object per span
    assert built[0].entities[0].mentions[0] == Mention(0, 1)


@pytest.mark.parametrize("clusters", [[[(2, 1)]], [[(-1, 0)]], [[]], [[(0, 1, 2)]]])
def test_documents_of_spans_refuses_what_from_clusters_refuses(clusters: list) -> None:
    with pytest.raises((ValueError, TypeError)):
        CorefDocument.from_clusters(clusters)
    with pytest.raises(ValueError, match="documents_of_spans takes"):
        documents_of_spans([(clusters, "d", 0)])


def test_column_parts_follow_the_scorer_rule() -> None:
    """The quick paths of ``_column_parts`` (one part, parts joined with '|') give what the scorer's rule gives."""
    rng = random.Random(0)
    atoms = ["(0", "0)", "(0)", "(12", "12)", "(12)", "(01)", "|", "||", "-", "_", "(", ")", "3", "(1+2)", "x"]
    joined = 0
    for _ in range(20000):
        if rng.random() < 0.5:
            column = "".join(rng.choice(atoms) for _ in range(rng.randint(1, 6)))
        else:
            column = "|".join(rng.choice(atoms[:7]) for _ in range(rng.randint(2, 4)))
        singles, opens, closes, rest = conll2012.parse_column(column)
        rule = conll2012_format
        readable = rule._LEFTOVER.match(rest) and (
            singles or opens or closes or column in ("-", "_") or rest.strip("|-_") or rule._DOUBLE.search(column)
        )
        expected = (singles, opens, closes, any(c.isdigit() for c in rest)) if readable else None
        assert conll2012_format._column_parts(column) == expected, column
        joined += "|" in column and all(map(conll2012_format._ONE_MENTION.fullmatch, column.split("|")))
    assert joined > 5000


def test_short_texts_are_read_line_by_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(conll2012, "_BULK_FROM", 1 << 15)
    calls = []
    monkeypatch.setattr(conll2012, "parse_bulk", lambda text, path: calls.append(len(text)))
    read_conll2012(ROOT / "metametric_jax" / "data" / "coref" / "sample.key")  # 4.5 kB
    assert calls == []
    read_conll2012(ROOT / "tests" / "data" / "coref" / "litbank.key")  # 52 kB: in bulk (here None: line by line)
    assert calls and calls[0] >= 1 << 15
