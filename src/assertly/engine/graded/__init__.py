"""Model-graded assertions, engine side: rubric judging and semantic similarity, without I/O.

* ``_judging``: the judge's request, the reading of its reply, the board between the engine
  and the runner (which makes the calls); ``_reply_text``: what a judge reads of an API reply.
* ``_embeddings`` (the local model, the ``assertly[similar]`` extra), ``_embedding_graph``
  (its int8 graph), ``_vectors`` (cosine and the checks on vectors a service returns).
* ``rubric`` (``llm-rubric``, ``rubric``) and ``similarity`` (``similar``): the assertions,
  listed in `assertly.engine._manifest`.

Importing this package imports none of its modules.
"""
