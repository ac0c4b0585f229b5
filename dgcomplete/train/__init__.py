"""Corpus building, decontamination and tokenizer training (run on CPU)."""
