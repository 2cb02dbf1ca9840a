"""OpenEvolve's EvaluationResult as evaluators use it: metrics plus artifacts (stderr, feedback...)."""
from dataclasses import dataclass, field
from typing import Any, Dict, Union


@dataclass
class EvaluationResult:
    metrics: Dict[str, float]
    artifacts: Dict[str, Union[str, bytes, Any]] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, metrics):
        return cls(metrics=metrics)

    def to_dict(self):
        return self.metrics

    def has_artifacts(self):
        return bool(self.artifacts)
