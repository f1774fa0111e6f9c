"""Every word of a ciphertext on the host, for bit-exact comparisons across devices and streams."""

from __future__ import annotations

import numpy as np


def words(ct) -> list[np.ndarray]:
    """The ciphertext's polynomials (eval form), each as a limbs x N array."""
    raw = ct._raw if ct._raw.form == "eval" else ct._ctx._raw.to_form(ct._raw, "eval")
    return [raw.poly(i).to_numpy() for i in range(raw.size)]


def same_words(a, b) -> bool:
    """Whether two ciphertexts (on any devices) hold the same words."""
    return all(np.array_equal(x, y) for x, y in zip(words(a), words(b), strict=True))
