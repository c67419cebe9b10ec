"""``python -m metametric_jax``: the ``metametric-jax`` command (see :mod:`metametric_jax.cli`)."""

from metametric_jax.cli import run

if __name__ == "__main__":
    run()
