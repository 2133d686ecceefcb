"""Words and languages: normalization, tokens, lemma/stem/prefix keys, stopwords, frame words and
answer-type tables. Every per-language table lives in this package.
"""
