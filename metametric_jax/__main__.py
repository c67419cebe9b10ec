"""``python -m metametric_jax``: the ``metametric-jax`` command (see :mod:`metametric_jax.cli`)."""

from metametric_jax.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
