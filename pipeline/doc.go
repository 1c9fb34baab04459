// Package pipeline is docpipe's domain: the entities of one analysis, their
// keys in the single table, the Repository that reads and changes them
// through the narrow table.Table and blob.Store interfaces, the pipeline
// definition, the step-handler contract and ingest.
//
// It knows nothing of AWS, SQLite or the state machine engine: drivers live
// under pipeline/driver, step handlers under pipeline/steps, reviewers'
// decisions under pipeline/review, readers of stored stage results under
// pipeline/stageoutput, and the cmd/ binaries choose which driver runs.
// Step error types live in the leaf package pipeline/steperr so that
// parsers, sniffing and OCR need not import this package.
//
// The aggregates are files of this one package, not packages of their
// own: one change often spans several of them in one table transaction (a
// step's outcome with its outbox event and audit entry; a workflow with
// its document, step item and indexes; a segment with its step's
// counters), and the Repository that writes those transactions is one type.
//
// Where each concept lives:
//
//	entities.go       Project, Document, Workflow, Segment, Transition and their statuses
//	ids.go            ULIDs: new, at a time, deterministic
//	keys.go           the single-table key layout (the only place keys are spelled out)
//	blobkeys.go       the blob layout (the only place blob keys are spelled out)
//	repository.go     Repository, its options and errors
//	query.go          paging and decoding of table queries
//	retry.go          the read-and-retry loop of writes that lose a race
//	projects.go       project items and settings
//	sinks.go          a project's event destinations
//	documents.go      document reads and lookups by content
//	workflows.go      creating workflows (document, workflow, step item, indexes at once)
//	steps_status.go   the step item: step and workflow status changes and their audit trail
//	step_progress.go  a running step's progress writes
//	recorder.go       StepRecorder: when steps start and finish, direct or batched with the next start
//	segments.go       segment items and finishing them with their step's counters
//	rerun.go          readying a finished workflow for another execution
//	recent.go         listing analyses of every status, newest first
//	admission.go      a project's slots: how many of its workflows run at once
//	outbox.go         outcome events written with the outcome, and their delivery state
//	reviews.go        Review: a person's approval of a stage, its claims and decision
//	definition.go     Definition, Stage, RunSpec: what a pipeline runs
//	stagetext.go      one-line, redacted texts of stages for people
//	pipelines.go      stored, immutable pipeline versions
//	evals.go          kept results of evaluating pipeline versions against truth
//	resolver.go       Pipelines: finding a workflow's pipeline version
//	handlers.go       the handler name that runs each stage
//	step.go           Handler, the step payloads (StepInput, StepOutput) and the Registry
//	ingest.go         Ingester: registering documents and starting their workflows
package pipeline
