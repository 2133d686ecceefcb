"""Retrieval and judgement: the hybrid SQL and its fusion, filters, the relevance filter, the
answerability stage, language relations and calibration profiles.
"""
