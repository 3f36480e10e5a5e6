"""PERSON mentions for AG's private attributes (docs/data.md, "AG"): NER with NLTK or spaCy, then surname merging.

:func:`person_mentions` is the slow step, cached by the ``ner_persons`` rule; :func:`canonical_persons` and
:func:`top_persons` are cheap and pure, so changing ``ag.n_entities`` only reruns the dataset build.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Iterable, Sequence

from privtext.data.nlp_resources import NLTK_NER_RESOURCES, ResourceError, load_spacy, use_nltk_data

NER_BACKENDS = ("nltk", "spacy")
SPACY_BATCH_SIZE = 256
# Quotes, brackets and separators that NER spans sometimes swallow at their edges; periods stay ("George W.").
_EDGE_PUNCTUATION = " \t\"'`“”‘’()[]{}<>,;:!?-–—"
_POSSESSIVE = re.compile(r"(?:'s|’s|'|’)$")


def person_mentions(
    texts: Sequence[str], backend: str, *, nltk_data: str | Path, spacy_model: str
) -> list[list[str]]:
    """PERSON entity strings of every text, in order of appearance (duplicates kept)."""
    if backend == "spacy":
        return _spacy_persons(texts, spacy_model)
    if backend == "nltk":
        return _nltk_persons(texts, nltk_data)
    raise ValueError(f"unknown NER backend {backend!r}; expected one of {NER_BACKENDS}")


def _spacy_persons(texts: Sequence[str], spacy_model: str) -> list[list[str]]:
    nlp = load_spacy(spacy_model)
    # In the en_core_web_* pipelines the NER has its own tok2vec, so every other component can be skipped.
    with nlp.select_pipes(enable=["ner"]):
        return [
            [ent.text for ent in doc.ents if ent.label_ == "PERSON"]
            for doc in nlp.pipe(texts, batch_size=SPACY_BATCH_SIZE)
        ]


def _missing_nltk_resource(error: LookupError) -> str:
    message = str(error)
    return next((name for name in NLTK_NER_RESOURCES if name in message), "an NLTK resource")


def _nltk_persons(texts: Sequence[str], nltk_data: str | Path) -> list[list[str]]:
    """pnet's route (``word_tokenize`` -> ``pos_tag`` -> multiclass ``ne_chunk``), keeping PERSON chunks."""
    import nltk
    from nltk.chunk import ne_chunker

    use_nltk_data(nltk_data)
    try:
        # nltk.ne_chunk reloads the model (about 1 s) on every call; build the same chunker once instead.
        chunker = ne_chunker(fmt="multiclass")
        return [_person_chunks(chunker.parse(nltk.pos_tag(nltk.word_tokenize(text)))) for text in texts]
    except LookupError as error:
        resource = _missing_nltk_resource(error)
        raise ResourceError(
            f"NLTK NER needs '{resource}', which is missing or incomplete under '{nltk_data}' "
            "(the multiclass PERSON chunker is chunkers/maxent_ne_chunker_tab/english_ace_multiclass). "
            "Install it there, or set ner_backend: spacy."
        ) from error


def _person_chunks(tree) -> list[str]:
    persons = tree.subtrees(lambda subtree: subtree.label() == "PERSON")
    return [" ".join(token for token, _ in chunk.leaves()) for chunk in persons]


def normalise_mention(mention: str) -> str:
    """Collapse whitespace, trim edge punctuation and drop a possessive ("Bush's" -> "Bush")."""
    name = " ".join(mention.split()).strip(_EDGE_PUNCTUATION)
    return _POSSESSIVE.sub("", name).strip(_EDGE_PUNCTUATION)


def canonical_persons(mentions_per_doc: Iterable[Iterable[str]]) -> list[set[str]]:
    """The set of canonical persons each document mentions.

    A single-token mention becomes the multi-token name ending in that token which most documents mention
    (ties: alphabetical), e.g. "Bush" -> "George W. Bush"; without such a name it stays as is. Multi-token
    names are their own canonical form (pnet hard-coded this merge for Bush, Kerry and Arafat).
    """
    docs = [{name for name in map(normalise_mention, mentions) if name} for mentions in mentions_per_doc]
    full_name_docs = Counter(name for names in docs for name in names if " " in name)
    by_surname: dict[str, str] = {}
    for name, count in sorted(full_name_docs.items(), key=lambda item: (-item[1], item[0])):
        by_surname.setdefault(name.rsplit(" ", 1)[1], name)
    return [{name if " " in name else by_surname.get(name, name) for name in names} for names in docs]


def top_persons(canonical: Iterable[set[str]], n: int) -> list[tuple[str, int]]:
    """The ``n`` persons mentioned in most documents, with those counts (ties: alphabetical)."""
    document_frequency = Counter(name for names in canonical for name in names)
    return sorted(document_frequency.items(), key=lambda item: (-item[1], item[0]))[:n]
