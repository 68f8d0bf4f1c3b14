"""Built-in layer: review (nudge counters and the background review).

Registered from `hermes_core.plugins.BUILTIN_PLUGINS`. Agent loops attach a runner to a live
session with :func:`attach_review` so due reviews can run (see docs/review.md).
"""

from .plugin import ReviewLayer, attach_review
from .review import ReviewReport, ReviewRunner, ReviewWrite, format_notices

__all__ = [
    "ReviewLayer",
    "ReviewReport",
    "ReviewRunner",
    "ReviewWrite",
    "attach_review",
    "format_notices",
]
