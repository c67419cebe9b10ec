"""User-defined buckets on the command line: ``analyze TASK --bucket [NAME=]MODULE:FUNCTION`` (or ``FILE.py:FUNCTION``).

A bucketing is a function from an item (``analyze ner``: an entity; ``dependency``: a word; ``constituency``: a
sentence; ``ie``: an entity, relation, trigger or argument; ``coref``: a document; ``amr``: a graph pair;
``ranking``: a query; ``rouge``: an example) to the name of its bucket, a string. On the command line it is named the
way ``python -m``, pytest and uvicorn name objects:

* ``--bucket mybuckets:capitalised`` imports the module ``mybuckets`` (the current directory is searched first, as
  ``python -m`` does) and takes its attribute ``capitalised`` (a dotted path, ``mod:Class.method``, is followed);
* ``--bucket path/to/buckets.py:capitalised`` loads the file itself, wherever it is, its folder searched first for
  the modules it imports (as ``python path/to/buckets.py`` would);
* ``--bucket caps=mybuckets:capitalised`` names the analysis ``caps`` in the report; without ``NAME=`` it is named
  after the function (``capitalised``).

Each ``--bucket`` adds one analysis, read out and tested as the task's other buckets are. Every problem is one line
naming the option and the function: a module or file that cannot be imported (and why), an attribute that is not
there or not callable, a call that raises (with the item it was given) or that returns anything but a non-empty
string (with the item and what came back). Nothing is converted silently: a function returning ``3`` for an item is
an error, since ``"3"`` and ``3`` would be the same bucket only by accident.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import importlib
import importlib.util
import os
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["BucketSpec", "BucketFunction", "parse", "load", "load_all"]

_DOTTED = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
#: the longest item or value shown in a message
_SHOWN = 160


@dataclasses.dataclass(frozen=True)
class BucketSpec:
    """One ``--bucket`` option, parsed: the analysis's name, and where its function is.

    Attributes:
        name: the analysis's name in the report (``NAME=``, else the function's own name).
        source: the module (``"pkg.mod"``) or the file (``"path/buckets.py"``) holding the function.
        attribute: the function's dotted name in it.
        text: the option's value as given (for messages).
    """

    name: str
    source: str
    attribute: str
    text: str

    @property
    def is_file(self) -> bool:
        """Whether ``source`` is a Python file rather than a module name."""
        return self.source.endswith(".py") or "/" in self.source or os.sep in self.source


def parse(value: str) -> BucketSpec:
    """``--bucket``'s type: ``[NAME=]MODULE:FUNCTION`` or ``[NAME=]FILE.py:FUNCTION`` (``ArgumentTypeError`` else).

    >>> parse("caps=mybuckets:capitalised")
    BucketSpec(name='caps', source='mybuckets', attribute='capitalised', text='caps=mybuckets:capitalised')
    >>> parse("tools/b.py:Rules.by_case").name
    'by_case'
    >>> parse("mybuckets")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: expected [NAME=]MODULE:FUNCTION or [NAME=]FILE.py:FUNCTION; found 'mybuckets'
    """
    name, target = None, value
    head, eq, tail = value.partition("=")
    if eq and not any(c in head for c in ":/\\"):
        name, target = head.strip(), tail
        if not name:
            raise argparse.ArgumentTypeError(f"expected a name before '=' in [NAME=]MODULE:FUNCTION; found {value!r}")
    source, colon, attribute = target.rpartition(":")
    usage = "[NAME=]MODULE:FUNCTION or [NAME=]FILE.py:FUNCTION"
    if not colon or not source or not _DOTTED.match(attribute):
        raise argparse.ArgumentTypeError(f"expected {usage}; found {value!r}")
    spec = BucketSpec(name or attribute.rpartition(".")[2], source, attribute, value)
    if not spec.is_file and not _DOTTED.match(source):
        raise argparse.ArgumentTypeError(f"expected {usage}: {source!r} is neither a module name nor a .py file")
    return spec


def _one_line(text: str) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= _SHOWN else flat[: _SHOWN - 3] + "..."


def _shown(value: Any) -> str:
    return _one_line(repr(value))


def _module(spec: BucketSpec) -> Any:
    where = f"--bucket {spec.text}"
    if spec.is_file:
        path = os.path.abspath(spec.source)
        if not os.path.isfile(path):
            raise ValueError(f"{where}: cannot import {spec.source}: no such file")
        digest = hashlib.sha1(path.encode("utf-8")).hexdigest()[:12]
        module_name = f"_metametric_jax_buckets_{digest}"
        if module_name in sys.modules:
            return sys.modules[module_name]
        loader_spec = importlib.util.spec_from_file_location(module_name, path)
        if loader_spec is None or loader_spec.loader is None:
            raise ValueError(f"{where}: cannot import {spec.source}: not a Python source file")
        module = importlib.util.module_from_spec(loader_spec)
        sys.modules[module_name] = module  # dataclasses and pickling look their module up by name
        folder = os.path.dirname(path)
        if folder not in sys.path:  # its own modules, imported now or when the function runs
            sys.path.insert(0, folder)
        try:
            loader_spec.loader.exec_module(module)
        except Exception as err:
            del sys.modules[module_name]
            raise ValueError(
                f"{where}: importing {spec.source} raised {type(err).__name__}: {_one_line(str(err))}"
            ) from None
        return module
    if os.getcwd() not in sys.path and "" not in sys.path:  # kept: the module may import more when it runs
        sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(spec.source)
    except ModuleNotFoundError as err:
        raise ValueError(
            f"{where}: cannot import module {spec.source!r}: {_one_line(str(err))} (looked in the current directory "
            "and sys.path; give FILE.py:FUNCTION for a file elsewhere)"
        ) from None
    except Exception as err:
        raise ValueError(
            f"{where}: importing module {spec.source!r} raised {type(err).__name__}: {_one_line(str(err))}"
        ) from None


class BucketFunction:
    """A user's bucket function, checked: each call returns a non-empty string or raises a one-line ``ValueError``.

    Pickles by its spec (a worker process loads the function again), so it can travel to ``--jobs`` workers.
    """

    def __init__(self, spec: BucketSpec, function: Callable[[Any], Any]) -> None:
        self.spec = spec
        self.function = function

    def __call__(self, item: Any) -> str:
        """The bucket of ``item``: the function's value, a non-empty string (``ValueError`` naming the item else)."""
        try:
            value = self.function(item)
        except Exception as err:
            raise ValueError(
                f"--bucket {self.spec.text}: the bucket function raised {type(err).__name__}: "
                f"{_one_line(str(err))} on the item {_shown(item)}"
            ) from None
        if not isinstance(value, str) or not value:
            found = "an empty string" if isinstance(value, str) else f"{type(value).__name__} {_shown(value)}"
            raise ValueError(
                f"--bucket {self.spec.text}: the bucket function returned {found} for the item "
                f"{_shown(item)}; expected a non-empty string, the item's bucket"
            )
        return value

    def __reduce__(self) -> tuple[Any, tuple[BucketSpec]]:
        return load, (self.spec,)

    def __repr__(self) -> str:
        return f"BucketFunction({self.spec.text!r})"


def load(spec: BucketSpec) -> BucketFunction:
    """The checked function of ``spec`` (``ValueError``, one line, when it cannot be imported or is not callable)."""
    target: Any = _module(spec)
    walked = spec.source
    for part in spec.attribute.split("."):
        if not hasattr(target, part):
            raise ValueError(f"--bucket {spec.text}: {walked} has no attribute {part!r}")
        target = getattr(target, part)
        walked = f"{walked}:{part}" if walked == spec.source else f"{walked}.{part}"
    if not callable(target):
        raise ValueError(
            f"--bucket {spec.text}: {spec.source}:{spec.attribute} is not callable (it is {type(target).__name__} "
            f"{_shown(target)}); expected a function from an item to its bucket's name"
        )
    return BucketFunction(spec, target)


def load_all(specs: Sequence[BucketSpec] | None) -> dict[str, BucketFunction] | None:
    """``{name: function}`` of the ``--bucket`` options in order (``None`` for none; ``ValueError``: a name twice)."""
    if not specs:
        return None
    out: dict[str, BucketFunction] = {}
    for spec in specs:
        if spec.name in out:
            raise ValueError(
                f"--bucket {spec.text}: two bucketings named {spec.name!r}; name one with NAME=MODULE:FUNCTION"
            )
        out[spec.name] = load(spec)
    return out
