"""Model providers: where embeddings and completions come from.

``ucma.providers.testing`` ships deterministic fakes of the OpenAI HTTP API so that tests, UCMA's
and its users', never call a paid service.
"""
