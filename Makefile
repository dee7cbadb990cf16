# smarth developer commands. `make` lists them.
.PHONY: help build test test-e2e fuzz bench lint demo proto

help:
	@echo "make build     build bin/smarth"
	@echo "make test      run the test suite (what CI runs)"
	@echo "make test-e2e  run the multi-process and testbed tests only"
	@echo "make fuzz      fuzz every network decoder for a while"
	@echo "make bench     run the Go micro-benchmarks"
	@echo "make lint      go vet"
	@echo "make demo      start a local cluster, upload, read back, run a job"
	@echo "make proto     regenerate the protobuf/gRPC code (needs protoc)"

build:
	go build -o bin/smarth ./cmd/smarth

test:
	go test -timeout 30m ./...

test-e2e:
	go test ./internal/testcluster/... ./internal/testbed/... -timeout 20m -v

# Every Fuzz target in the tree, FUZZTIME each (go test runs one target at a time;
# -timeout 0: go test's default 10-minute timeout would end a 10m run).
FUZZTIME ?= 30s
fuzz:
	@for f in $$(grep -rl --include='*_test.go' '^func Fuzz' internal); do \
		pkg=./$$(dirname $$f); \
		for t in $$(grep -o '^func Fuzz[A-Za-z0-9_]*' $$f | cut -d' ' -f2); do \
			echo "== $$pkg $$t"; \
			go test $$pkg -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) -timeout 0 || exit 1; \
		done; \
	done

bench:
	go test ./... -run '^$$' -bench . -benchtime 3x

lint:
	go vet ./...

demo: build
	./bin/smarth demo

proto:
	for f in $$(find internal/rpc -name '*.proto'); do \
		protoc -I internal/rpc --go_out=. --go_opt=module=smarth \
		  --go-grpc_out=. --go-grpc_opt=module=smarth $$f || exit 1; \
	done
