"""``ag`` and ``ag_dpnr``: AG's corpus of news with the 5 most frequent PERSON entities as private attributes.

``ag`` rebuilds the task (docs/data.md, "AG") from Gulli's ``newsspace200.xml`` or the ``ag_news_csv`` layout, using
the PERSON mentions cached by the ``ner_persons`` rule. ``ag_dpnr`` reads the DPNR authors' preprocessed
``ag_data.txt`` and keeps their splits.

Text normalisation is pnet's (Coavoux et al. 2018, ``ag_data_reader.preprocess``), applied to both layouts so that
NER sees the same text the DPNR file holds: every backslash becomes a space, then ``&lt;``, ``&gt;`` and ``&amp;``
are unescaped. (The CSV readme says newlines are escaped as ``\\n``, but the files mostly hold a lone backslash
where a line broke, as in ``second\\team``, and ``\\$`` before amounts; so ``\\n`` cannot be told from a line
break before a word starting with n, and all backslashes are treated alike.) Nothing else is touched: leftovers
such as `` #39;`` and `` quot;`` stay, as in the DPNR file.
"""

from __future__ import annotations

import csv
import re
from collections import Counter
from pathlib import Path
from typing import Any, Iterator, Mapping
from xml.sax.saxutils import unescape

import pandas as pd

from privtext.data.common import SPLITS, BuiltDataset, DatasetError, Quarantine, has_lone_surrogate, split_frame
from privtext.data.ner import canonical_persons, top_persons

# Label order is pnet's (and so DPNR's): index = y.
NEWSSPACE_CATEGORIES = ["World", "Entertainment", "Sports", "Business"]
CSV_CLASSES = ["World", "Sports", "Business", "Sci/Tech"]  # ag_news_csv classes.txt, class index 1..4
CSV_ROLES = ("csv_train", "csv_test")
ENTITY_VALUES = ["absent", "present"]
TITLE_SEPARATOR = "  "  # title and description are joined by two spaces in pnet and the DPNR file
DPNR_SEPARATOR = "=" * 20
# A title and description run to a few hundred characters. A text past this cap is not a news summary, and it
# must never reach NER: spaCy refuses texts of 1,000,000 characters or more (error E088).
MAX_TEXT_CHARS = 100_000
DPNR_N_ENTITIES = 5
# ag_data.txt names no person. Inferred here from the most frequent capitalised words of the documents that
# mention only that entity (e.g. "Arafat", "Yasser", "Palestinian" for id 2); plausible but unverified.
DPNR_LIKELY_NAMES = ["George W. Bush", "John Kerry", "Yasser Arafat", "Tony Blair", "Ariel Sharon"]

_XML_ENTITY = re.compile(r"&(lt|gt|amp|quot|apos|#[0-9]+|#x[0-9a-fA-F]+);")
_XML_NAMED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"', "apos": "'"}
_CDATA_START, _CDATA_END = "<![CDATA[", "]]>"
_EMPTY_ELEMENT_END = re.compile(r"\s*/>")


def normalise_text(text: str) -> str:
    """pnet's preprocessing: backslashes to spaces, then unescape ``&lt;``, ``&gt;`` and ``&amp;``."""
    return unescape(text.replace("\\", " "))


def _decode(raw: bytes) -> str:
    # The corpus is mostly ASCII with stray latin-1 bytes; valid UTF-8 is taken as such, anything else as latin-1.
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _join(title: str, description: str) -> str:
    return TITLE_SEPARATOR.join(part for part in (title, description) if part.strip())


def _text_problem(text: str) -> str | None:
    """The quarantine reason of a document's joined text, if any: empty, or longer than ``MAX_TEXT_CHARS``."""
    if not text:
        return "empty_text"
    if len(text) > MAX_TEXT_CHARS:
        return "text_too_long"
    return None


# --- newsspace200.xml ---------------------------------------------------------------------------------------

def _newsspace_records(path: Path) -> Iterator[tuple[int, str]]:
    """(line of its ``<source>``, text) of each record: everything from one ``<source>`` to the next.

    The file is a flat sequence of fields under one root and is not reliably well-formed, so it is cut into
    records on ``<source>`` instead of being parsed as a whole; one bad record then costs only itself.
    """
    start, chunks = None, []
    with path.open("rb") as handle:
        for line_number, line in enumerate(handle, 1):
            head, *starts = line.split(b"<source>")
            if start is not None:
                chunks.append(head)
            for piece in starts:
                if start is not None:
                    yield start, _decode(b"".join(chunks))
                start, chunks = line_number, [b"<source>", piece]
    if start is not None:
        yield start, _decode(b"".join(chunks))


def _xml_field(record: str, tag: str) -> str | None:
    """The unescaped text of ``<tag>`` in ``record``; "" when empty (``<tag/>``), None when absent; ValueError if
    unclosed. Found by a linear scan with ``str.find``: a lazy regex rescans the rest of the record from every
    unclosed tag, quadratic in a record of many (8,000 in 78 KiB cost seconds)."""
    opening, closing = f"<{tag}", f"</{tag}>"
    position = record.find(opening)
    while position != -1:
        after = position + len(opening)
        if record.startswith(">", after):
            end = record.find(closing, after + 1)
            if end == -1:
                raise ValueError(f"<{tag}> is not closed")
            return _XML_ENTITY.sub(_xml_entity, _unwrap_cdata(record[after + 1:end]))
        if _EMPTY_ELEMENT_END.match(record, after):
            return ""
        position = record.find(opening, after)  # a longer name such as <categoryX>: look further
    return None


def _unwrap_cdata(value: str) -> str:
    """``value`` with each ``<![CDATA[...]]>`` replaced by its content (an unterminated one is kept as written),
    in one pass."""
    pieces, position = [], 0
    while (start := value.find(_CDATA_START, position)) != -1:
        end = value.find(_CDATA_END, start + len(_CDATA_START))
        if end == -1:
            break
        pieces += [value[position:start], value[start + len(_CDATA_START):end]]
        position = end + len(_CDATA_END)
    pieces.append(value[position:])
    return "".join(pieces)


def _xml_entity(match: re.Match) -> str:
    name = match.group(1)
    if not name.startswith("#"):
        return _XML_NAMED[name]
    try:
        return chr(int(name[2:], 16) if name.startswith("#x") else int(name[1:]))
    except (ValueError, OverflowError):  # not a code point: keep the reference as written
        return match.group(0)


def _read_newsspace(path: Path, quarantine: Quarantine) -> tuple[list[tuple], dict[str, int]]:
    rows, other_categories = [], Counter()
    for number, (line, record) in enumerate(_newsspace_records(path)):
        try:
            category, title, description = (_xml_field(record, tag) for tag in ("category", "title", "description"))
        except ValueError as error:
            quarantine.add("newsspace_unclosed_field", path, line, f"{error}: {record[:200]}")
            continue
        if category is None or (title is None and description is None):
            quarantine.add("newsspace_missing_field", path, line, record[:200])
            continue
        # `&#xD800;` decodes to a lone surrogate, which no UTF-8 writer accepts (the split would fail to save).
        unencodable = next((tag for tag, value in (("category", category), ("title", title),
                                                   ("description", description))
                            if value and has_lone_surrogate(value)), None)
        if unencodable:
            quarantine.add("unencodable_text", path, line, record[:200], field=unencodable)
            continue
        category = category.strip()
        if category not in NEWSSPACE_CATEGORIES:
            other_categories[category] += 1
            continue
        text = _join(normalise_text(title or ""), normalise_text(description or ""))
        if problem := _text_problem(text):
            quarantine.add(problem, path, line, record[:200])
            continue
        rows.append((f"ag:{path.stem}:{number}", text, NEWSSPACE_CATEGORIES.index(category), category))
    return rows, {"other_category": sum(other_categories.values())}


# --- ag_news_csv --------------------------------------------------------------------------------------------

def _read_ag_csv(path: Path, quarantine: Quarantine) -> list[tuple]:
    """One row per line (the layout escapes newlines), so each line is parsed on its own with its number."""
    rows = []
    with path.open("rb") as handle:
        for line_number, raw in enumerate(handle, 1):
            line = _decode(raw).rstrip("\r\n")
            try:
                fields = next(csv.reader([line], strict=True), [])
            except csv.Error as error:
                quarantine.add("csv_unparsable_row", path, line_number, f"{error}: {line}")
                continue
            if len(fields) != 3:
                quarantine.add("csv_wrong_field_count", path, line_number, f"{len(fields)} fields: {line}")
                continue
            class_index, title, description = fields
            if class_index.strip() not in {"1", "2", "3", "4"}:
                quarantine.add("csv_bad_class", path, line_number, f"class {class_index!r}: {line}")
                continue
            text = _join(normalise_text(title), normalise_text(description))
            if problem := _text_problem(text):
                quarantine.add(problem, path, line_number, line[:200])
                continue
            y = int(class_index) - 1
            rows.append((f"ag:{path.stem}:{line_number}", text, y, CSV_CLASSES[y]))
    return rows


# --- documents and NER ---------------------------------------------------------------------------------------

def label_names(inputs: Mapping[str, Path]) -> list[str]:
    """Class names of the AG source in ``inputs`` (newsspace takes precedence, as in the layout order)."""
    if "newsspace" in inputs:
        return list(NEWSSPACE_CATEGORIES)
    if any(role in inputs for role in CSV_ROLES):
        return list(CSV_CLASSES)
    raise DatasetError(f"ag: no raw input among roles {sorted(inputs)}; expected 'newsspace' or {CSV_ROLES}")


def _read_documents(inputs: Mapping[str, Path], quarantine: Quarantine) -> tuple[pd.DataFrame, dict[str, int]]:
    label_names(inputs)  # fails clearly when no AG source is given
    if "newsspace" in inputs:
        source = Path(inputs["newsspace"])
        rows, filtered = _read_newsspace(source, quarantine)
    else:
        source, rows, filtered = Path(inputs.get("csv_test") or inputs["csv_train"]), [], {}
        for role in CSV_ROLES:
            if role in inputs:
                rows += _read_ag_csv(Path(inputs[role]), quarantine)
    if not rows:
        raise DatasetError(f"ag: no usable document in {source} (see the quarantine counts)")
    frame = pd.DataFrame(rows, columns=["id", "text", "y", "category"]).astype({"y": "int64"})
    return frame, filtered


def read_ag_documents(
    inputs: Mapping[str, Path], quarantine: Quarantine, filtered: dict[str, int] | None = None
) -> pd.DataFrame:
    """AG documents of the source in ``inputs``: columns ``id``, ``text``, ``y`` (int) and ``category``; the
    records left out by design are counted into ``filtered`` when it is given."""
    documents, counts = _read_documents(inputs, quarantine)
    if filtered is not None:
        filtered.update(counts)
    return documents


def _attach_persons(documents: pd.DataFrame, ner_path: Path) -> pd.DataFrame:
    """Join the cached PERSON mentions on ``id``; a cache built from other documents is an error, not a gap."""
    ner = pd.read_parquet(ner_path, columns=["id", "persons"])
    missing = len(set(documents["id"]) - set(ner["id"]))
    extra = len(set(ner["id"]) - set(documents["id"]))
    if missing or extra or ner["id"].duplicated().any():
        raise DatasetError(
            f"ag: NER cache '{ner_path}' does not match the documents ({missing} without NER, {extra} unknown, "
            f"{int(ner['id'].duplicated().sum())} duplicated ids); it is stale: delete it so ner_persons reruns"
        )
    merged = documents.merge(ner, on="id", how="left", validate="one_to_one")
    merged["persons"] = [[] if persons is None else list(persons) for persons in merged["persons"]]
    return merged


def _entity_columns(n: int) -> tuple[dict[str, list[str]], dict[str, str]]:
    attributes = {f"entity{i}": list(ENTITY_VALUES) for i in range(n)}
    return attributes, {name: "entity" for name in attributes}


def build_ag(inputs: Mapping[str, Path], options: Mapping[str, Any], seed: int, quarantine: Quarantine) -> BuiltDataset:
    """AG via NER (pnet/DPNR): keep documents mentioning one of the ``n_entities`` most frequent persons."""
    documents, filtered = _read_documents(inputs, quarantine)
    documents = _attach_persons(documents, Path(inputs["ner"]))
    canonical = canonical_persons(documents["persons"])
    n_entities = options["n_entities"]
    top = top_persons(canonical, n_entities)
    if len(top) < n_entities:
        raise DatasetError(f"ag: only {len(top)} distinct PERSON entities found, ag.n_entities is {n_entities}")
    frame = documents[["id", "text", "y"]].copy()
    for i, (name, _) in enumerate(top):
        frame[f"z_entity{i}"] = [int(name in persons) for persons in canonical]
    mentions_top = frame.filter(like="z_entity").any(axis=1)
    filtered = {**filtered, "no_top_person": int((~mentions_top).sum())}
    attributes, kinds = _entity_columns(n_entities)
    return BuiltDataset(
        splits=split_frame(frame[mentions_top], options["split"], seed),
        label_names=label_names(inputs),
        private_attributes=attributes,
        attribute_kinds=kinds,
        filtered=filtered,
        extra={
            "entities": [
                {"attribute": f"entity{i}", "name": name, "documents": count} for i, (name, count) in enumerate(top)
            ],
            "ner_backend": options["ner_backend"],
            "source": options["ner_source"],
        },
    )


# --- ag_dpnr -------------------------------------------------------------------------------------------------

class _BadLine(ValueError):
    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason, self.detail = reason, detail


def _parse_dpnr_line(line: str) -> tuple[int, str, list[int]]:
    """``label \\t text \\t entity-ids``, split as DPNR does (``line.lstrip().split("\\t")``)."""
    fields = line.lstrip().split("\t")
    if len(fields) != 3:
        raise _BadLine("dpnr_wrong_field_count", f"{len(fields)} fields")
    label, text, entity_ids = fields
    if label not in {"0", "1", "2", "3"}:
        raise _BadLine("dpnr_bad_label", repr(label))
    if not text.strip():
        raise _BadLine("empty_text")
    entities = entity_ids.split()
    if any(e not in {str(i) for i in range(DPNR_N_ENTITIES)} for e in entities):
        raise _BadLine("dpnr_bad_entity_id", repr(entity_ids))
    return int(label), text, sorted({int(e) for e in entities})


def read_dpnr_sections(path: Path, quarantine: Quarantine) -> list[list[tuple]]:
    """The train, dev and test rows ``(id, text, y, z_entity0..4)`` of a DPNR ``ag_data.txt``."""
    sections, rows, position = [], [], 0
    with path.open("rb") as handle:
        for line_number, raw in enumerate(handle, 1):
            line = _decode(raw).rstrip("\r\n")
            if line == DPNR_SEPARATOR:
                sections.append(rows)
                rows, position = [], 0
                continue
            if not line.strip():
                continue
            split = SPLITS[len(sections)] if len(sections) < len(SPLITS) else f"extra{len(sections)}"
            example_id, position = f"ag_dpnr:{split}:{position}", position + 1
            try:
                label, text, entities = _parse_dpnr_line(line)
            except _BadLine as bad:
                quarantine.add(bad.reason, path, line_number, f"{bad.detail} | {line[:200]}")
                continue
            rows.append((example_id, text, label, *(int(i in entities) for i in range(DPNR_N_ENTITIES))))
    if len(sections) != len(SPLITS) or rows or position:
        unterminated = " and an unterminated one" if rows or position else ""
        raise DatasetError(
            f"ag_dpnr: '{path}' should hold 3 sections (train, dev, test), each closed by a line of 20 '='; "
            f"found {len(sections)} closed section(s){unterminated}"
        )
    return sections


def build_ag_dpnr(
    inputs: Mapping[str, Path], options: Mapping[str, Any], seed: int, quarantine: Quarantine
) -> BuiltDataset:
    """The DPNR authors' AG file with their own train/dev/test split (``seed`` is unused: nothing is drawn)."""
    path = Path(inputs["ag_data"])
    columns = ["id", "text", "y", *(f"z_entity{i}" for i in range(DPNR_N_ENTITIES))]
    splits = {
        name: pd.DataFrame(rows, columns=columns).astype({c: "int64" for c in columns[2:]})
        for name, rows in zip(SPLITS, read_dpnr_sections(path, quarantine))
    }
    attributes, kinds = _entity_columns(DPNR_N_ENTITIES)
    documents = {name: sum(int(frame[f"z_{name}"].sum()) for frame in splits.values()) for name in attributes}
    return BuiltDataset(
        splits=splits,
        label_names=list(NEWSSPACE_CATEGORIES),
        private_attributes=attributes,
        attribute_kinds=kinds,
        extra={
            "entities": [
                {"attribute": attribute, "name": None, "likely_name": likely, "documents": count}
                for (attribute, count), likely in zip(documents.items(), DPNR_LIKELY_NAMES)
            ],
            "entity_names_note": (
                "the file does not name the persons; likely_name is inferred from the words of the documents "
                "that mention only that entity (unverified)"
            ),
            "source": "dpnlp",
        },
    )
