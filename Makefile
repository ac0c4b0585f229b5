# dgcomplete — every target bootstraps .venv itself (CPU torch pinned: plain `torch` pulls a multi-GB CUDA build).
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
HOST   ?= 127.0.0.1
PORT   ?= 2087
# the GPU run's vocabulary: the shipped model's, so what it returns is compared and shipped like for like
GPU_TOKENIZER ?= dgcomplete/models/dg-code-tiny/tokenizer.json

.PHONY: setup serve test test-slow test-editors lint bench reliability train train-continue gpu-bundle gpu-reference gpu-prep candidate corpus corpus-large tokenizer clean vsix

$(STAMP): pyproject.toml
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q torch==2.13.0
	$(PIP) install -q -e '.[test,bench]'
	@rm -f $(VENV)/.installed-* && touch $(STAMP)

setup: $(STAMP)

## Serve the embedded model on TCP $(HOST):$(PORT) to any number of clients (one LSP session each) until Ctrl-C;
## prints one line when ready. Editors can also start `dgcomplete serve` (stdio) or `serve --shared` (shared daemon)
serve: setup
	$(VENV)/bin/dgcomplete serve --tcp $(HOST):$(PORT)

## Unit, protocol and end-to-end tests (slow and real-editor tests have their own targets)
test: setup
	$(PY) -m pytest -q

test-slow: setup
	$(PY) -m pytest -q -m slow

test-editors: setup
	$(MAKE) -C editors test

lint: setup
	$(VENV)/bin/ruff check dgcomplete tests bench

## Benchmarks: writes bench/results/latest.json, summary.md and plots
bench: setup
	$(PY) -m bench.run

vsix:
	$(MAKE) -C editors vsix

corpus: setup
	$(PY) -m dgcomplete.train.corpus --out data/corpus

# tier 3, the large corpus (>= 1.2 GB: tier 2 plus dgcomplete/train/corpus_tier3.py, larger per-language caps);
# writes data/corpus_large and its manifest dgcomplete/train/corpus_manifest_large.json (the shipped model's
# corpus_manifest.json is left alone). C and Java come from Debian source packages through a private deb-src index.
corpus-large: setup
	nice -n 19 $(PY) -m dgcomplete.train.corpus --tier 3 --out data/corpus_large --cache data/cache

tokenizer: setup
	$(PY) -m dgcomplete.train.tokenizer --corpus data/corpus --vocab-size 8192 --out data/tokenizer.json

# the shipped model's shape and objective (dgcomplete/models/dg-code-tiny/MODEL_CARD.md) with Muon for the
# matrices (bench/results/muon_ab.json), the masking-rate floor t ~ U(0.1, 1) and 4 masking draws per encoded
# prefix (bench/results/draws_ab.json); on CPU it sees ~1-2k tokens/s,
# so the shipped 201M tokens came from a lent GPU: see gpu-bundle
train: setup
	$(PY) -m dgcomplete.train.train --corpus data/corpus --tokenizer data/tokenizer.json --run runs/base \
		--mode mask --d 256 --layers 6 --heads 4 --ff 768 --prefix 384 --minutes 180 --threads 2 \
		--optimizer muon --lr 1.5e-3 --muon-lr 0.02 --t-min 0.1 --draws 4

## Continue the shipped model on this CPU when no GPU is lent (bench/results/cpu_continuation.json): its own
## objective (t ~ U(0, 1)) from the learning rate it ended at (1.5e-4, batch 64) decayed to a tenth; resumable
## (run it again after an interruption), dev losses first and every 40 steps, fp16 snapshots in runs/cpu/snap
## every 10 minutes; ship a snapshot only when the dev split and the suites improve (MODEL_CARD.md)
train-continue: setup
	nice -n 10 $(PY) -m dgcomplete.train.train --corpus data/corpus --tokenizer dgcomplete/models/dg-code-tiny/tokenizer.json \
		--run runs/cpu --init-from dgcomplete/models/dg-code-tiny --mode mask --d 256 --layers 6 --heads 4 --ff 768 \
		--prefix 384 --batch 32 --accum 2 --lr 1.5e-4 --warmup 2 --decay-frac 1.0 --minutes 120 --t-min 0 \
		--threads 1 --lm-weight 0.5 --save-every 5 --eval-every 40 --snapshots runs/cpu/snap --export-every 10 --export-fp16 \
		--metrics runs/cpu/metrics.jsonl

# the corpus as xz shards (one per device call) + tokenizer + gpu/run.sh (start / feed / finish) + gpu/README
# (the exact device calls) for the one training run on a lent GPU machine (dgcomplete/train/bundle.py)
gpu-bundle: setup
	$(PY) -m dgcomplete.train.bundle --corpus data/corpus --tokenizer $(GPU_TOKENIZER) --out gpu

## Issue #19's reference on a lent GPU: the transformers wheel this venv has (the device image's lacks
## DiffusionGemma) into gpu/whl, for the optional real_shape call the rewritten gpu/README lists
gpu-reference: setup
	rm -rf gpu/whl && $(PY) -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
		--platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 -d gpu/whl \
		transformers==$$($(PY) -c 'import transformers; print(transformers.__version__)')
	$(PY) -m dgcomplete.train.bundle --out gpu --scripts-only

## Everything a session that is lent a GPU needs, from a fresh clone (nothing under gpu/ or data/ survives a
## session): the tier-2 corpus, its shards and the reference wheel (timed step by step in
## bench/results/gpu_prep.json); then the calls gpu/README lists. Run it before the first device call: the lease is
## not counting yet. One step after the other, also under make -j (the shards need the corpus)
gpu-prep:
	$(MAKE) corpus
	$(MAKE) gpu-bundle
	$(MAKE) gpu-reference

## A checkpoint a lent GPU returned (bundle --unpack) as a ship candidate: CKPT=runs/gpu/A writes runs/gpu/A-cand with
## the shipped decoding settings, fits its gate on the held-out dev split (then its `elsewhere` weights on the dev
## splits' lines typed, bench.gate_fit --extend) and measures HumanEval single-line; copy it
## into dgcomplete/models/dg-code-tiny only when both beat the shipped model's (MODEL_CARD.md)
candidate: setup
	@test -n "$(CKPT)" || { echo "usage: make candidate CKPT=runs/gpu/A"; exit 2; }
	$(PY) -m dgcomplete.train.ship --candidate $(CKPT) --out $(CKPT)-cand
	$(PY) -m bench.gate_fit --model $(CKPT)-cand --l2 1e-3 --target 0.65 --write --out $(CKPT)-cand/gate_fit.json
	for s in dev dev_langs; do $(PY) -m bench.typing_replay --model $(CKPT)-cand --split $$s --observe \
		--set minConfidence=0 --dump $(CKPT)-cand/observe_$$s.jsonl --out $(CKPT)-cand/observe_$$s.json || exit 1; done
	$(PY) -m bench.gate_fit --model $(CKPT)-cand --extend $(CKPT)-cand/observe_dev.jsonl \
		$(CKPT)-cand/observe_dev_langs.jsonl --write --out $(CKPT)-cand/gate_typing.json
	$(PY) -m bench.context --model $(CKPT)-cand --split dev_ruby_php --ablate no_gate --dump $(CKPT)-cand/ruby_php.jsonl
	$(PY) -m bench.context --model $(CKPT)-cand --curve $(CKPT)-cand/ruby_php.jsonl --target 0.65 \
		--write-thresholds ruby,php --out $(CKPT)-cand/gate_ruby_php.json
	$(PY) -m bench.context --model $(CKPT)-cand --split dev_ruby_php --as-text --ablate no_gate --dump $(CKPT)-cand/text.jsonl
	$(PY) -m bench.context --model $(CKPT)-cand --curve $(CKPT)-cand/text.jsonl --target 0.65 \
		--write-thresholds other --out $(CKPT)-cand/gate_other.json
	$(PY) -m bench.quality --model $(CKPT)-cand --suites humaneval_single --baseline-limit 0 --threads 2 \
		--out $(CKPT)-cand/humaneval_single.json

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache

## Reliability under bad input, load and faults: writes bench/results/reliability.md and reliability.json
reliability: setup
	$(PY) -m bench.reliability
