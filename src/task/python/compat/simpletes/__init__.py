"""A minimal stand-in for the part of SimpleTES that its task evaluators import (simpletes.construction), so
SimpleTES task folders run under hone unmodified when SimpleTES itself is not installed."""
