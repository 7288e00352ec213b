"""The seed experiments: the catalogue, their claims, figures and the reproduction report."""

from .catalogue import BY_ID, CATALOGUE, Experiment
from .claims import Claim, ClaimResult, Data, Verdict
from .reproduction import ReproduceReport, reproduce, resolve

__all__ = [
    "BY_ID", "CATALOGUE", "Claim", "ClaimResult", "Data", "Experiment", "ReproduceReport", "Verdict",
    "reproduce", "resolve",
]
