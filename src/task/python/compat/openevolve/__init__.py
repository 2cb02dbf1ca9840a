"""A minimal stand-in for the parts of OpenEvolve that task evaluators import, so upstream task folders run
under hone unmodified. Only EvaluationResult is provided. It is on an evaluator's PYTHONPATH, ahead of site-packages,
so it is used even where OpenEvolve is installed (a task's own folder or python_path still comes first)."""
