# The two commands a newcomer needs are `make demo` and `make test`; the rest
# are the pieces they are built from.
SHELL := /bin/bash
GO    ?= go
BIN   := $(CURDIR)/bin
VENV  := $(CURDIR)/.venv
export PATH := $(BIN):$(VENV)/bin:$(PATH)
# Recorded as tool_version in every run's meta.json.
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

.PHONY: all build venv tools demo demo-images test bench release blobs bosh-cli clean

all: build

# Go tools: hey and credhub-perf from the shipped (vendored) module,
# credhub-sim from its own module so its SQLite driver never ships.
# -trimpath: without it Go's build cache keys each package by its directory,
# so a fresh clone (or scripts/readme-test's copy) compiled every vendored
# package again; with it another checkout's build serves this one.
build:
	@mkdir -p $(BIN)
	cd src/credhub-perf && $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/...
	cd src/credhub-sim && $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/...

# The plotter in a local virtualenv. The pip that venv bundles (Python >= 3.10)
# installs an editable pyproject package; upgrading it first cost a download.
# --no-compile: byte-compiling all of numpy and matplotlib took half of the
# install's CPU; Python compiles the modules it imports when it first does.
venv: $(VENV)/.installed
$(VENV)/.installed: plotting/pyproject.toml
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --no-compile -e './plotting[test]'
	@touch $@

# The Go build (CPU) and the virtualenv (mostly waiting on downloads) side by
# side: on a fresh clone that is the longer of the two, not their sum.
tools:
	@$(MAKE) --no-print-directory -j2 build venv

demo: tools
	scripts/demo

# Regenerates the images the README shows, from a fresh demo run.
demo-images: demo
	scripts/demo-images

test: tools
	scripts/test-all

bench: tools
	scripts/bench

bosh-cli:
	@scripts/bosh-cli >/dev/null

blobs: bosh-cli
	scripts/add-blobs

release: blobs
	scripts/create-release

clean:
	rm -rf $(BIN) demo-out dev_releases .dev_builds
