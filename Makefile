# ckpt: build, demo, test, bench, lint, fmt. Needs only Go and git.
GO      ?= go
BIN     := bin/ckpt
PKGS    := ./...
# Fuzz targets run briefly in `make test` with their seed corpus (testdata/fuzz).
FUZZTIME ?= 5s
# The packages that hold fuzz targets.
FUZZPKGS := ./sections/ ./secrets/ ./delta/ ./sync/ ./repo/

.PHONY: build demo test fuzz bench soak lint fmt clean

build:
	$(GO) build -o $(BIN) ./cmd/ckpt

demo: build
	./scripts/demo.sh $(BIN)

test:
	$(GO) vet $(PKGS)
	$(GO) test -count=1 $(PKGS)
	$(MAKE) fuzz

fuzz:
	@for pkg in $(FUZZPKGS); do \
		for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			$(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 1s $$pkg || exit 1; \
		done; \
	done

bench:
	$(GO) test -run '^$$' -bench . -benchmem -count=1 -timeout 20m $$($(GO) list $(PKGS) | grep -v -e '/repo$$' -e '/internal/proctest$$')
	$(GO) test -run '^$$' -bench . -benchmem -count=1 -benchtime 300x -timeout 20m ./repo/
	$(GO) test -run '^$$' -bench 'Process' -count=1 -benchtime 20x -timeout 20m ./internal/proctest/
	$(GO) test -run '^$$' -bench . -skip 'Process' -count=1 -timeout 20m ./internal/proctest/

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
