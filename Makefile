# leo — build, test and measure. `make test` is the README's test command and
# what .ci/run runs.

GO        ?= go
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X main.version=$(VERSION)
TESTFLAGS ?=
FUZZTIME  ?= 10s

.PHONY: all build test bench fuzz-smoke clean

all: build

## build: the leo binary at bin/leo. Without cgo (leo uses none): a static
## binary that skips the dynamic loader, ~0.6 ms off every command's start.
build:
	CGO_ENABLED=0 $(GO) build -ldflags '$(LDFLAGS)' -o bin/leo ./cmd/leo

## test: vet, then every test with the race detector (needs tmux >= 3.2 and git)
test:
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 20m $(TESTFLAGS) ./...

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
