"""``python -m metametric_jax`` and the ``metametric-jax`` console script: a command's process from its first import.

The cycle collector runs rarely (:func:`metametric_jax._collector.collect_rarely`) before the command line's modules
are imported, then :func:`metametric_jax.cli.run` runs the command. A program that imports :mod:`metametric_jax.cli`
(a notebook, a test) keeps its collector as it is.
"""

from metametric_jax._collector import collect_rarely

collect_rarely()  # before the imports below: their objects live as long as the process

from metametric_jax.cli import run  # noqa: E402 - after the collector is set

__all__ = ["run"]

if __name__ == "__main__":
    run()
