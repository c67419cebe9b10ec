"""The compiled readers of the package: optional (a reader falls back to NumPy where they could not be built)."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "metametric_jax.tasks.readers._ptb_scan",
            ["metametric_jax/tasks/readers/_ptb_scan.c"],
            optional=True,
        ),
        Extension(
            "metametric_jax.tasks.readers._trec_scan",
            ["metametric_jax/tasks/readers/_trec_scan.c"],
            optional=True,
        ),
    ]
)
