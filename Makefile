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
	go test ./... -timeout 20m

test-e2e:
	go test ./internal/testcluster/... ./internal/testbed/... -timeout 20m -v

fuzz:
	go run ./internal/tools/fuzzall

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
