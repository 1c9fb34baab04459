# docpipe — `make` prints this help.
GO        ?= go
PKGS      ?= ./...
BIN       ?= bin
MOTO_PORT ?= 4566

.DEFAULT_GOAL := help

.PHONY: help
help: ## show this help
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-18s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## build the docpipe, steps and ingest binaries into ./bin
	$(GO) build -o $(BIN)/ ./cmd/...

.PHONY: run-sample
run-sample: ## run the main job on the bundled samples (embedded default)
	$(GO) run ./cmd/docpipe run --home .docpipe samples/docs

.PHONY: test
test: ## all tests with -race and -short (large inputs and generated cases sized down); with moto_server installed, also the AWS suites
	.ci/test

.PHONY: test-long
test-long: ## the tests that size down under -short, at full size, without -race (moto as for make test)
	.ci/test long

.PHONY: test-unit
test-unit: ## make test's run and flags, starting no emulator (AWS suites skip); PKGS=./pipeline/... narrows it
	PKGS='$(PKGS)' .ci/test unit

.PHONY: test-integration
test-integration: ## integration suite against AWS_ENDPOINT_URL (default http://localhost:4566, e.g. LocalStack)
	AWS_ENDPOINT_URL=$${AWS_ENDPOINT_URL:-http://localhost:4566} $(GO) test -race -count=1 -tags integration -timeout 20m $(PKGS)

.PHONY: test-localstack
test-localstack: ## integration suite and golden cases on LocalStack in host mode (from PyPI, cached; DynamoDB on moto); no Docker
	.ci/test-localstack

.PHONY: localstack-up
localstack-up: ## start LocalStack in Docker on :4566 (needs a Docker engine)
	docker run --rm -d --name docpipe-localstack -p 4566:4566 -e SERVICES=dynamodb,dynamodbstreams,s3,sqs,stepfunctions,events,sts,iam localstack/localstack

.PHONY: localstack-down
localstack-down: ## stop LocalStack
	docker stop docpipe-localstack

.PHONY: lint
lint: ## gofmt, go vet and staticcheck
	@test -z "$$(gofmt -l .)" || { echo "gofmt needed:"; gofmt -l .; exit 1; }
	$(GO) vet $(PKGS)
	$(GO) vet -tags integration $(PKGS)
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 $(PKGS)

.PHONY: bench
bench: ## benchmarks: orchestration, extraction, analysis, state, end-to-end runs
	$(GO) test -run '^$$' -bench . -benchmem -timeout 60m $(PKGS)

.PHONY: bench-compare
bench-compare: ## one ~3,000-page real-producer PDF (enscript, made if missing): pdftotext, PyMuPDF, docpipe with poppler and pure Go
	$(GO) test -run '^$$' -bench '^BenchmarkCompare$$' -benchtime 1x -timeout 30m ./cmd/docpipe

.PHONY: generate
generate: ## regenerate the committed state machine definitions
	$(GO) test ./statemachine -run TestCommittedDefinitionsMatchGenerator -update

.PHONY: verify
verify: ## fail when generated files are stale, go.mod is untidy or git holds compiled files
	.ci/repo-check
	$(GO) test ./statemachine -run TestCommittedDefinitionsMatchGenerator -count=1

.PHONY: package
package: ## build the Lambda zips (linux/arm64, provided.al2023) into ./bin
	.ci/package $(BIN)

.PHONY: tf-fmt
tf-fmt: ## terraform fmt -check
	terraform fmt -check -recursive terraform

# checkov reads the HCL without providers. --skip-download keeps it offline
# (no policy metadata from its vendor); every exception is a
# #checkov:skip=ID:reason comment next to the resource it concerns.
CHECKOV ?= checkov

.PHONY: tf-scan
tf-scan: ## checkov over the Terraform module and examples (pip install checkov==3.3.30)
	$(CHECKOV) --directory terraform --framework terraform --skip-download --quiet --compact

.PHONY: tf-validate
tf-validate: ## terraform init+validate the example (needs provider downloads)
	cd terraform/examples/complete && terraform init -backend=false && terraform validate

.PHONY: corpus
corpus: ## build PDFs with real producers (groff, TeX, LibreOffice, Chromium, qpdf...) and compare the pure-Go extractor with pdftotext on them
	@dir=$${DOCPIPE_CORPUS:-$$(mktemp -d)}; samples/corpus/build.sh "$$dir" && \
	DOCPIPE_CORPUS="$$dir" $(GO) test -count=1 -v -run 'TestCorpus' ./pipeline/extract/pdftext

.PHONY: hostile
hostile: ## the hostile corpus at full size (GB bombs, minutes): each file within 60 s and 512 MB, with each PDF backend installed
	DOCPIPE_HOSTILE_FULL=1 $(GO) test -count=1 -v -run '^TestHostileCorpus$$' -timeout 30m ./cmd/docpipe

.PHONY: contract
contract: ## the generated pipeline contract: thousands of random pipelines and faults (CONTRACT_N, default 3000)
	$(GO) test -count=1 -timeout 6h -run '^TestContract$$' ./cmd/internal/contract -contract.n $${CONTRACT_N:-3000}
