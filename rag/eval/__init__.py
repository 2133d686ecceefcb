"""Evaluation sets, metrics, the calibration sweep and the CI gate's floors."""
