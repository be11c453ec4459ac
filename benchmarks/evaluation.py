"""Retrieval quality on BEIR-format folders (corpus.jsonl, queries.jsonl, qrels/<split>.tsv).

Metrics are computed per query over documents (a document's rank is that of its best chunk)
and averaged over the queries that have judgments, as BEIR does.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from edgechat.core.records import Document, Page


@dataclass
class BeirSet:
    corpus: dict[str, tuple[str, str]]  # id -> (title, text)
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]  # query id -> {doc id: grade}


def load_beir(folder: str | Path, split: str = "train", limit: int = 0) -> BeirSet:
    """`limit`: keep only the first N judged queries (smoke runs)."""
    folder = Path(folder)
    corpus: dict[str, tuple[str, str]] = {}
    with open(folder / "corpus.jsonl", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                d = json.loads(line)
                corpus[str(d["_id"])] = (d.get("title", "") or "", d.get("text", "") or "")
    queries: dict[str, str] = {}
    with open(folder / "queries.jsonl", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                d = json.loads(line)
                queries[str(d["_id"])] = d["text"]
    qrels: dict[str, dict[str, int]] = {}
    qrel_file = folder / "qrels" / f"{split}.tsv"
    if not qrel_file.exists():
        found = sorted((folder / "qrels").glob("*.tsv"))
        if not found:
            raise FileNotFoundError(f"no qrels/*.tsv in {folder}")
        qrel_file = found[0]
    with open(qrel_file, encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            grade = int(row["score"])
            if grade > 0:
                qrels.setdefault(str(row["query-id"]), {})[str(row["corpus-id"])] = grade
    queries = {q: t for q, t in queries.items() if q in qrels}
    if limit:
        queries = dict(list(queries.items())[:limit])
    return BeirSet(corpus, queries, qrels)


def beir_documents(beir: BeirSet) -> Iterable[tuple[str, Document]]:
    """Each abstract as a one-page document keyed by its id; the title leads the text, as the
    reference BEIR runs embed title and text together."""
    for doc_id, (title, text) in beir.corpus.items():
        body = f"{title}\n{text}" if title else text
        yield doc_id, Document(path=doc_id, title=title or doc_id, format="text", pages=[Page(1, body)])


def ndcg_at(ranked: Sequence[str], rel: Mapping[str, int], k: int) -> float:
    dcg = sum((2 ** rel.get(d, 0) - 1) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted(rel.values(), reverse=True)[:k]
    idcg = sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def recall_at(ranked: Sequence[str], rel: Mapping[str, int], k: int) -> float:
    if not rel:
        return 0.0
    return len(set(ranked[:k]) & set(rel)) / len(rel)


def mrr_at(ranked: Sequence[str], rel: Mapping[str, int], k: int) -> float:
    for i, d in enumerate(ranked[:k]):
        if rel.get(d, 0) > 0:
            return 1.0 / (i + 1)
    return 0.0


def score_run(run: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, int]]) -> dict[str, float]:
    """Mean metrics of a run ({query id: ranked doc ids}) over the judged queries."""
    qs = [q for q in qrels if q in run]
    if not qs:
        return {"ndcg@10": 0.0, "recall@10": 0.0, "recall@100": 0.0, "mrr@10": 0.0, "queries": 0}
    n = len(qs)
    return {
        "ndcg@10": sum(ndcg_at(run[q], qrels[q], 10) for q in qs) / n,
        "recall@10": sum(recall_at(run[q], qrels[q], 10) for q in qs) / n,
        "recall@100": sum(recall_at(run[q], qrels[q], 100) for q in qs) / n,
        "mrr@10": sum(mrr_at(run[q], qrels[q], 10) for q in qs) / n,
        "queries": n,
    }


def dedupe_docs(paths: Iterable[str]) -> list[str]:
    """Document ids in order of their best chunk."""
    return list(dict.fromkeys(paths))
