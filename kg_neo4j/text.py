"""Pure text helpers for search_memory: the names a question may mention, the question
without them, and a Lucene query that cannot be misread."""

from __future__ import annotations

import re
from collections import Counter
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
#: The fulltext index's text fields (cypher/schema.cypher, schema_fulltext; its fourth is ``namespace``).
FULLTEXT_FIELDS = ("name", "entityType", "text")

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


def fulltext_words(text: str) -> str:
    """The words of a Lucene query that means "any of these words": only word characters survive, so
    syntax in a question (``/ : ( " AND *``) can neither error nor change the meaning;
    lower-cased so AND/OR/NOT are words, not operators."""
    terms = list(dict.fromkeys(_WORD.findall(text.lower())))
    return " ".join(terms[:MAX_FULLTEXT_TERMS])


def fulltext_query(text: str, namespace: str) -> str:
    """The Lucene query of ``text``'s words (:func:`fulltext_words`) in ``namespace``: "" when it has none.

    The one fulltext index serves every namespace and indexes each node's ``namespace`` beside its text
    (cypher/schema.cypher, schema_fulltext), so the namespace is a required clause of the query: the
    index returns this namespace's best, not the database's best of which other namespaces may take the
    whole page.  The clause is a phrase of the namespace analysed as it was indexed (only ``\\`` and
    ``"`` escaped) and scores nothing (``^0``); a namespace whose words hold another's lets that one's
    nodes through, and the statements keep ``namespace = $ns``.  The words are searched in the text
    fields only (``FULLTEXT_FIELDS``), never in ``namespace``."""
    words = fulltext_words(text)
    if not words:
        return ""
    fields = " ".join(f"{field}:({words})" for field in FULLTEXT_FIELDS)
    phrase = namespace.replace("\\", "\\\\").replace('"', '\\"')
    return f'+namespace:"{phrase}"^0 +({fields})'


#: How many capitalised words of a question are looked up as names people call each other.
MAX_CALLED_WORDS = 4
#: At least this many messages must use the word before it is read as a name, ...
CALLED_MIN_USES = 3
#: ... most of them answered by one entity (the turn after), which itself writes almost none of them,
#: and most of them address someone ("Hey Kate!", "What about you, Kate?").
CALLED_REPLY_SHARE = 0.6
CALLED_SELF_SHARE = 0.1
CALLED_VOCATIVE_SHARE = 0.5
_CAPITALISED = re.compile(r"(?<!^)(?<![.!?]\s)\b([^\W\d_][^\W\d_'’]+)", re.UNICODE)
_GREETING = r"(?:hi|hey|hello|thanks|thank you|dear|yes|no|oh|wow|well|morning|night|bye)"


def capitalised_words(question: str, known_lower: Sequence[str]) -> list[str]:
    """The question's capitalised words past its first that name no known entity ("Kate" in "What are
    Kate's hobbies?"): the names the memory may know only as what people call each other."""
    known = {w for name in known_lower for w in name.split()}
    out: dict[str, None] = {}
    for m in _CAPITALISED.finditer(question.strip()):
        word = m.group(1)
        if word[0].isupper() and word.lower() not in STOPWORDS and word.lower() not in known:
            out[word] = None
    return list(out)[:MAX_CALLED_WORDS]


def called_name(word: str, uses: Sequence[tuple[str, str | None, str]]) -> str | None:
    """The entity the others call ``word``, read from the messages that use it: ``uses`` is (who wrote
    it, who wrote the turn after, the text) for each.  A name people call someone by is written by the
    others, addressed to that someone ("What about you Kate?"), and answered by them; a third person's
    name ("I met Sarah") is not addressed, and a place ("Miami") neither.  None when the messages do not
    say so clearly."""
    pattern = re.compile(r"(?<![^\W\d_])" + re.escape(word) + r"(?![^\W\d_])")
    own = [(w, r, t) for w, r, t in uses if pattern.search(t)]
    if len(own) < CALLED_MIN_USES:
        return None
    replied = Counter(r for w, r, _ in own if r is not None and r != w)
    if not replied:
        return None
    entity, answers = replied.most_common(1)[0]
    written = sum(1 for w, _, _ in own if w == entity)
    vocative = re.compile(
        rf"(?:(?:,\s*|\b{_GREETING}\s+){re.escape(word)}(?![^\W\d_]))"
        rf"|(?:(?<![^\W\d_]){re.escape(word)}\s*(?:[,.!?]|$))",
        re.IGNORECASE,
    )
    addressed = sum(1 for _, _, t in own if vocative.search(t))
    if (
        answers / len(own) >= CALLED_REPLY_SHARE
        and written / len(own) <= CALLED_SELF_SHARE
        and addressed / len(own) >= CALLED_VOCATIVE_SHARE
    ):
        return entity
    return None
