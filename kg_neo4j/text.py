"""Pure text helpers for search_memory: the names a question may mention, the question
without them, and a Lucene query that cannot be misread."""

from __future__ import annotations

import re
from collections.abc import Sequence

#: Words that carry no content on their own (a question reduced to these is not worth embedding).
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below between
    both but by can could did do does doing down during each few for from further had has have having he her here
    hers herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off
    on once only or other our ours ourselves out over own same she should so some such than that the their theirs
    them themselves then there these they this those through to too under until up very was we were what when where
    which while who whom whose why will with would you your yours yourself yourselves tell say said""".split()
)
MAX_FULLTEXT_TERMS = 64

_WORD = re.compile(r"\w+", re.UNICODE)
MAX_GRAM_WORDS = 4
MAX_GRAMS = 256


def question_grams(text: str) -> list[str]:
    """Lower-cased word n-grams (1-4 words) of a question: the names it might mention.
    Two tokenisations: word characters only ("john_smith", "new york") and
    whitespace-separated with outer punctuation and a possessive 's removed ("o'brien")."""
    lowered = text.lower()
    spaced = [w.strip('.,;:!?"()[]{}<>') for w in lowered.split()]
    spaced = [w[:-2] if w.endswith(("'s", "’s")) else w for w in spaced]
    grams: dict[str, None] = {}
    per_list = MAX_GRAMS // (2 * MAX_GRAM_WORDS)  # every tokenisation and length gets its share
    for words in (_WORD.findall(lowered), [w for w in spaced if w]):
        for n in range(1, MAX_GRAM_WORDS + 1):
            for i in range(min(len(words) - n + 1, per_list)):
                grams[" ".join(words[i : i + n])] = None
    grams.pop("", None)
    return list(grams)


def strip_mentions(text: str, names_lower: Sequence[str]) -> str:
    """The question without the entity names it mentions (and their possessive 's); the
    original text when nothing meaningful would be left."""
    out = text
    for name in sorted(names_lower, key=len, reverse=True):
        out = re.sub(name_pattern(name), " ", out, flags=re.IGNORECASE)
    out = re.sub(r"\s+", " ", out).strip()
    content = [w for w in _WORD.findall(out.lower()) if w not in STOPWORDS]
    return out if content else text


def name_pattern(name_lower: str) -> str:
    """A mention of the name (any whitespace between its words, any case, with its possessive 's)."""
    return r"(?<!\w)" + r"\s+".join(re.escape(p) for p in name_lower.split()) + r"(?:['’]s)?(?!\w)"


def replace_mention(text: str, name_lower: str, by: str) -> str:
    """``text`` with each mention of the name replaced by ``by`` (an alias by the name of its entity)."""

    def by_name(m: re.Match[str]) -> str:
        tail = m.group(0)[-2:]
        return by + (tail if tail.lower() in ("'s", "’s") else "")

    return re.sub(name_pattern(name_lower), by_name, text, flags=re.IGNORECASE)


def fulltext_query(text: str) -> str:
    """A Lucene query that means "any of these words": only word characters survive, so
    syntax in a question (``/ : ( " AND *``) can neither error nor change the meaning;
    lower-cased so AND/OR/NOT are words, not operators."""
    terms = list(dict.fromkeys(_WORD.findall(text.lower())))
    return " ".join(terms[:MAX_FULLTEXT_TERMS])
