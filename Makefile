# ckpt: build, install, demo, test, bench, lint, fmt. Needs only Go and git.
GO      ?= go
BIN     := bin/ckpt
PKGS    := ./...
# Two builds of cmd/ckpt (cmd/ckpt/fullbuild.go): ckpt, lean, for the processes that commit,
# check, log and run hooks; ckpt-full beside it, with the web UI, the MCP server and go-git's
# network, which ckpt hands those commands to. urfave_cli_no_docs leaves out urfave/cli's
# man-page generator (and blackfriday) from both. A plain `go build`/`go install` makes one
# binary with every command. CGO_ENABLED=0 links them statically: no dynamic loader and libc
# to map at every start (about 1 ms of CPU per process), and os/user reads /etc/passwd.
LEAN_TAGS := ckpt_lean,urfave_cli_no_docs
FULL_TAGS := urfave_cli_no_docs
# Fuzz targets run briefly in `make test` with their seed corpus (testdata/fuzz).
FUZZTIME ?= 5s
# The packages that hold fuzz targets.
FUZZPKGS := ./sections/ ./secrets/ ./delta/ ./sync/ ./repo/

.PHONY: build install demo test fuzz bench soak lint fmt clean

build:
	CGO_ENABLED=0 $(GO) build -tags $(LEAN_TAGS) -o $(BIN) ./cmd/ckpt
	CGO_ENABLED=0 $(GO) build -tags $(FULL_TAGS) -o $(BIN)-full ./cmd/ckpt

# Installs both builds where go install puts binaries ($GOBIN, else $GOPATH/bin).
install:
	CGO_ENABLED=0 $(GO) build -tags $(LEAN_TAGS) -o "$$($(GO) env GOBIN | grep . || echo $$($(GO) env GOPATH)/bin)/ckpt" ./cmd/ckpt
	CGO_ENABLED=0 $(GO) build -tags $(FULL_TAGS) -o "$$($(GO) env GOBIN | grep . || echo $$($(GO) env GOPATH)/bin)/ckpt-full" ./cmd/ckpt

demo: build
	./scripts/demo.sh $(BIN)

test:
	$(GO) vet $(PKGS)
	$(GO) vet -tags $(LEAN_TAGS) ./cmd/ckpt ./repo
	$(GO) test -count=1 $(PKGS)
	$(MAKE) fuzz

fuzz:
	@for pkg in $(FUZZPKGS); do \
		for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			$(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 1s $$pkg || exit 1; \
		done; \
	done

# The stores the benchmarks build (a search store of 1,000 sessions × 100 versions, histories
# of 100 to 10,000 commits, 1,000 sessions × 20 commits) are kept in BENCH_CACHE between
# runs: the first run builds them (about 15 minutes more), later ones reuse them.
# CKPT_BENCH_100K=1 adds the 100,000-commit history to the sweep.
BENCH_CACHE ?= $(HOME)/.cache/ckpt-bench
BENCH_ENV := CKPT_BENCH_CACHE=$(BENCH_CACHE) CKPT_BENCH_STORE=$(BENCH_CACHE)/search-1000x100 \
	CKPT_BENCH_HISTORY=$(BENCH_CACHE)/history-10000 CKPT_BENCH_UI_STORE=$(BENCH_CACHE)/ui-10000

bench:
	mkdir -p $(BENCH_CACHE)
	$(BENCH_ENV) $(GO) test -run '^$$' -bench . -benchmem -count=1 -timeout 30m $$($(GO) list $(PKGS) | grep -v -e '/repo$$' -e '/internal/proctest$$')
	$(BENCH_ENV) $(GO) test -run '^$$' -bench . -benchmem -count=1 -benchtime 300x -timeout 20m ./repo/
	$(BENCH_ENV) $(GO) test -run '^$$' -bench 'Ratio(History|Diff1MB|Start)|GitCommitHooks1000|CronTick' -count=1 -benchtime 30x -timeout 30m ./internal/proctest/
	$(BENCH_ENV) $(GO) test -run '^$$' -bench 'RatioPushClone' -count=1 -benchtime 2x -timeout 30m ./internal/proctest/

# The long run of the model test (internal/modeltest): longer random sequences from seed
# SEED on, for DURATION; it prints the figures at the end and every failing seed, which
# `go test ./internal/modeltest -run TestModel -seed=N -long -v` replays.
SEED     ?= 1
DURATION ?= 30m
soak:
	$(GO) test -count=1 -timeout 0 -run '^TestModel$$' -v ./internal/modeltest -start=$(SEED) -soak=$(DURATION)

lint:
	$(GO) vet $(PKGS)
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	@if $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 -version >/dev/null 2>&1; then \
		$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 $(PKGS); \
	else echo "staticcheck not available from the module proxy; skipped"; fi

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin
