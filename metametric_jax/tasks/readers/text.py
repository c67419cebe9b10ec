r"""Text files, read one way for every reader: UTF-8, a byte-order mark removed, bad bytes an error.

Every reader of :mod:`metametric_jax.tasks.readers` reads its file through :func:`read_text` (or, when it scans bytes,
through :func:`read_utf8`, which checks them once). A byte that is not UTF-8 is an
:class:`~metametric_jax.errors.InputFormatError` naming the file, the line and the byte; nothing is replaced silently.
Line endings are left as they are (``\r\n`` included): each format's parser reads them.

Example:
    >>> decode_text(b"\xef\xbb\xbfa\r\nb\n", "t.txt")
    'a\r\nb\n'
    >>> decode_text(b"a\nb\xff\n", "t.txt")
    Traceback (most recent call last):
    ...
    metametric_jax.errors.InputFormatError: t.txt:2: expected UTF-8 text; found the byte 0xff, which is not valid UTF-8
"""

from __future__ import annotations

import os

from metametric_jax.errors import InputFormatError

__all__ = ["BOM", "check_utf8", "decode_text", "read_text", "read_utf8", "split_lines"]

#: The UTF-8 byte-order mark, as bytes; decoded, it is ``"\ufeff"``.
BOM = b"\xef\xbb\xbf"


def _not_utf8(data: bytes, err: UnicodeDecodeError, path: str) -> InputFormatError:
    line = data.count(b"\n", 0, err.start) + 1
    return InputFormatError(
        path, line, f"expected UTF-8 text; found the byte 0x{data[err.start]:02x}, which is not valid UTF-8"
    )


def decode_text(data: bytes, path: str | os.PathLike[str]) -> str:
    """``data`` as UTF-8 text, a leading byte-order mark removed.

    Raises:
        InputFormatError: on a byte that is not UTF-8 (naming ``path``, its line and the byte).
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise _not_utf8(data, err, os.fspath(path)) from None
    return text[1:] if text.startswith("\ufeff") else text


def read_text(path: str | os.PathLike[str]) -> str:
    """The text of a UTF-8 file (:func:`decode_text` of its bytes).

    Raises:
        InputFormatError: on a byte that is not UTF-8 (naming the file, its line and the byte).
        OSError: the file cannot be read.
    """
    with open(path, "rb") as handle:
        data = handle.read()
    return decode_text(data, path)


def read_utf8(path: str | os.PathLike[str]) -> bytes:
    """The bytes of a file, checked to be UTF-8 (for readers that scan bytes; a byte-order mark is kept).

    Raises:
        InputFormatError: on a byte that is not UTF-8 (naming the file, its line and the byte).
        OSError: the file cannot be read.
    """
    with open(path, "rb") as handle:
        data = handle.read()
    check_utf8(data, path)
    return data


def check_utf8(data: bytes, path: str | os.PathLike[str]) -> None:
    """Nothing, if ``data`` is UTF-8.

    Raises:
        InputFormatError: on a byte that is not UTF-8 (naming ``path``, its line and the byte).
    """
    if data.isascii():
        return
    import numpy as np  # here: the text readers of the CLI's start import none of it

    # The runs of non-ASCII bytes, each followed by a newline, decoded at once: valid UTF-8 exactly when the whole is
    # (an ASCII byte is a character of its own, never part of another), and a few kilobytes rather than the whole
    # text decoded to a string of 2-4 bytes a character (1.6 MB of trees with 2,000 accented letters: 1.0 -> 0.6 ms).
    raw = np.frombuffer(data, np.uint8)
    high = np.flatnonzero(raw >= 128)
    apart = np.diff(high) > 1
    runs = np.full(high.size + int(apart.sum()) + 1, 10, np.uint8)
    place = np.arange(high.size)
    place[1:] += np.cumsum(apart)
    runs[place] = raw[high]
    try:
        runs.tobytes().decode("utf-8")
    except UnicodeDecodeError:
        try:
            data.decode("utf-8")  # the first bad byte, for the message
        except UnicodeDecodeError as err:
            raise _not_utf8(data, err, os.fspath(path)) from None


def split_lines(text: str) -> list[str]:
    r"""The lines of a text split at ``\n`` (a ``\r`` before it kept), without the empty piece after a final newline.

    The lines a file iterated in binary mode gives, decoded, less their ``\n``.

    >>> split_lines("a\r\nb\n"), split_lines("a\n\nb"), split_lines("")
    (['a\r', 'b'], ['a', '', 'b'], [])
    """
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines
