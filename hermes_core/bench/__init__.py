"""What ``hermes-memory bench`` measures: LoCoMo retrieval quality (``locomo``, ``retrievers``) and
the speed of each layer (``memory``, ``sessions``, ``skills``, ``compression``). Figures go to
docs/benchmarks.md with their command; tests never assert a speed."""
