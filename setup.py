"""The compiled part of the package: optional (a reader falls back to NumPy where it could not be built)."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "metametric_jax.tasks.readers._ptb_scan",
            ["metametric_jax/tasks/readers/_ptb_scan.c"],
            optional=True,
        )
    ]
)
