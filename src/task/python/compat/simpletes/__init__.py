"""A minimal stand-in for the part of SimpleTES that its task evaluators import (simpletes.construction), so
SimpleTES task folders run under hone unmodified. It is on an evaluator's PYTHONPATH, ahead of site-packages, so it is
used even where SimpleTES is installed (a task's own folder or python_path still comes first)."""
