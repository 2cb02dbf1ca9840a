"""SimpleTES's construction hooks as its evaluators call them.

SimpleTES's engine may ask an evaluator to save the construction it validated (for warm-starting later programs)
by naming a file in an environment variable; when the engine does not ask, the hook does nothing and says so.
hone never asks, so the hook always answers False, and no program is warm-started from another one's output.
"""


def capture_construction_if_requested(value):
    """Nothing is captured under hone; returns False, as SimpleTES does when no capture was requested."""
    return False


def load_shared_construction_from_env():
    """hone shares no construction between programs."""
    return None
