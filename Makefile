# zkafka — see README.md. Every target works from a fresh clone.
GO        ?= go
BIN       := bin/zkafka
PKGS      := ./...
FUZZTIME  ?= 10s

.PHONY: all build run test compat bench fuzz lint clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/zkafka

## run: build and start the embedded default (ZooKeeper :2181 and a broker :9092).
run: build
	./$(BIN) run

## test: every Go test, including compat tests driven by the Go client libraries.
test:
	$(GO) test -count=1 -timeout 9m $(PKGS)

## compat: the non-Go clients and Apache ZooKeeper (installs their Debian packages).
compat: build
	bash compat-tests/compat.sh

## bench: benchmarks and load generators that print figures.
bench:
	bash scripts/bench.sh

## fuzz: a short run of every fuzz target.
fuzz:
	FUZZTIME=$(FUZZTIME) bash scripts/fuzz.sh

## lint: gofmt check and go vet.
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

clean:
	rm -rf bin zkafka-data
