"""A minimal stand-in for the parts of OpenEvolve that task evaluators import, so upstream task folders run
under hone unmodified when OpenEvolve itself is not installed. Only EvaluationResult is provided."""
