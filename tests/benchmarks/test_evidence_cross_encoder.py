"""The cross-encoder trial's bookkeeping: which halves it trains on and which quotes it learns
as answering (the training itself needs torch, in the conversion environment)."""

from benchmarks.evidence_cross_encoder import answering, half, pair


def test_half_numbers_and_unnumbered_splits():
    assert half("heldout17") == 17
    assert half("heldout") == 0 and half("tune") == 0


def test_answering_quotes_hold_the_most_key_facts():
    row = {"quotes": [{"facts": 1}, {"facts": 2}, {"facts": 0}, {"facts": 2}]}
    assert answering(row) == [1, 3]
    assert answering({"quotes": [{"facts": 0}, {"facts": 0}]}) == []
    assert answering({"quotes": []}) == []


def test_a_quote_is_read_before_the_one_before_it():
    row = {"question": "What is the default backlog?"}
    quote = {"reading": "The default value is 511.", "before": "Server: It can take a backlog parameter."}
    assert pair(row, quote) == ("What is the default backlog?",
                                "The default value is 511. [SEP] Server: It can take a backlog parameter.")
