"""Operations that look across every store of a home for one user at a time.

Used by ``hermes-memory ui`` and ``hermes-memory memory forget``; they call the layers' and the
active
provider's public functions and never hold rules of their own beyond putting them
together: :mod:`.people` (who a home knows), :mod:`.forget` (forget a subject or a user, with
a proof), :mod:`.rawscan` (a byte search of the home's files) and :mod:`.compact` (SQLite
files rewritten so freed pages keep no old bytes).
"""
