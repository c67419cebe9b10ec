"""Latent variables: fields whose identity matters only through a one-to-one alignment (Smatch's variables)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from metametric_jax.similarity import Mode, Similarity

__all__ = ["Variable", "VariableSim"]


@dataclasses.dataclass(frozen=True)
class Variable:
    """A latent variable, e.g. an AMR node name. Two structures' variables are aligned one-to-one when matched.

    Attributes:
        name: the variable's name (unique within one structure).
    """

    name: str


class VariableSim(Similarity):
    """The similarity of two variables taken on their own: always 1; the alignment they require is a binding."""

    name = "variable"

    def score(self, x: Any, y: Any, mode: Mode = "pr") -> float:
        return 1.0

    def gram(self, xs: Sequence[Any], ys: Sequence[Any], mode: Mode = "pr") -> np.ndarray:
        return np.ones((len(xs), len(ys)), dtype=np.float64)

    def bindings(self, x: Any, y: Any) -> list[tuple[Any, Any]]:
        return [(x, y)]

    @property
    def has_variables(self) -> bool:
        return True
