# leo — build, test and measure. `make test` is the README's test command and
# what .ci/run runs.

GO        ?= go
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X main.version=$(VERSION)
TESTFLAGS ?=
FUZZTIME  ?= 10s

# The linters, pinned (.ci/run installs exactly these with go install).
STATICCHECK_VERSION ?= v0.8.2
GOIMPORTS_VERSION   ?= v0.51.0
export PATH := $(PATH):$(shell $(GO) env GOPATH)/bin

.PHONY: all build lint test test-real test-real-latest bench fuzz-smoke clean

all: build

## build: the leo binary at bin/leo. Without cgo (leo uses none): a static
## binary that skips the dynamic loader, ~0.6 ms off every command's start.
build:
	CGO_ENABLED=0 $(GO) build -ldflags '$(LDFLAGS)' -o bin/leo ./cmd/leo

## lint: vet (and a darwin build and vet: launchd and the managed install
## are macOS code), staticcheck (dead code, deprecated calls, common bugs)
## and imports grouped as goimports groups them. Installs the pinned linters
## when they are not on PATH; by hand:
##   go install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
##   go install golang.org/x/tools/cmd/goimports@$(GOIMPORTS_VERSION)
lint:
	$(GO) vet ./...
	GOOS=darwin $(GO) build ./...
	GOOS=darwin $(GO) vet ./...
	@command -v staticcheck >/dev/null || $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	@command -v goimports >/dev/null || $(GO) install golang.org/x/tools/cmd/goimports@$(GOIMPORTS_VERSION)
	staticcheck ./...
	@out=$$(goimports -l .); if [ -n "$$out" ]; then \
		echo "imports not grouped as goimports does (run goimports -w on these):"; echo "$$out"; exit 1; fi

## test: lint, then every test with the race detector (needs tmux >= 3.2 and git)
test: lint
	$(GO) test -race -count=1 -timeout 20m $(TESTFLAGS) ./...

## test-real: the real-CLI contract suite (e2e/real): claude, codex, opencode
## and pi from npm at the versions in e2e/realcli/versions.env, installed
## into a cache by e2e/realcli/install.sh (or taken from LEO_REALCLI_BIN),
## driven through leo against a model server on loopback. Needs npm and the
## npm registry; fails (never skips) when the CLIs cannot be had.
## docs/testing.md has the details and how to bump the versions.
test-real:
	@set -e; bin="$$LEO_REALCLI_BIN"; \
	if [ -z "$$bin" ]; then bin="$$(e2e/realcli/install.sh)"; fi; \
	echo "== real CLIs in $$bin"; \
	for c in claude codex opencode pi; do echo "   $$c: $$("$$bin/$$c" --version 2>&1 | head -n1)"; done; \
	LEO_REALCLI_BIN="$$bin" LEO_REALCLI_REQUIRED=1 $(GO) test -count=1 -parallel 3 -timeout 28m $(TESTFLAGS) ./e2e/real/

## test-real-latest: the same suite on the newest claude, codex, opencode and pi
## on npm (@latest), installed by `e2e/realcli/install.sh --latest` into a
## folder of their own (<cache>/latest, never a pinned one), or taken from
## LEO_REALCLI_BIN. The table's header and version row say which versions
## ran (go test shows the table with -v or on a failure; the versions are
## printed first either way). CI (.ci/run) keeps the pins; this is on request.
test-real-latest:
	@set -e; bin="$$LEO_REALCLI_BIN"; \
	if [ -z "$$bin" ]; then bin="$$(e2e/realcli/install.sh --latest)"; fi; \
	echo "== newest real CLIs in $$bin"; \
	for c in claude codex opencode pi; do echo "   $$c: $$("$$bin/$$c" --version 2>&1 | head -n1)"; done; \
	LEO_REALCLI_BIN="$$bin" LEO_REALCLI_LATEST=1 LEO_REALCLI_REQUIRED=1 $(GO) test -count=1 -parallel 3 -timeout 28m $(TESTFLAGS) ./e2e/real/

## bench: the whole-process and package benchmarks; each prints its figures
bench:
	$(GO) test -run '^$$' -bench . -benchtime 20x ./bench/
	$(GO) test -run '^$$' -bench . ./internal/...

## fuzz-smoke: every fuzz target for FUZZTIME each (corpora also run in `make test`)
fuzz-smoke:
	@set -e; for dir in $$(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u); do \
		for fn in $$(grep -h '^func Fuzz' $$dir/*_test.go | sed 's/^func \(Fuzz[A-Za-z0-9_]*\).*/\1/'); do \
			echo "== $$dir $$fn"; \
			$(GO) test -run '^$$' -fuzz "^$$fn$$" -fuzztime $(FUZZTIME) $$dir; \
		done; \
	done

clean:
	rm -rf bin

print-%:
	@echo $($*)
