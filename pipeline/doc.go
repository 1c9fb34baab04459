// Package pipeline is docpipe's domain: the entities of one analysis
// (project, document, workflow, step, segment, transition), their keys in
// the single table, the repository that reads and changes them through the
// narrow table.Table and blob.Store interfaces, the pipeline definition, the
// step-handler contract and ingest.
//
// It knows nothing of AWS, SQLite or the state machine engine: drivers live
// under pipeline/driver, step handlers under pipeline/steps, and the cmd/
// binaries choose which driver runs. Step error types live in the leaf
// package pipeline/steperr so that parsers, sniffing and OCR need not import
// this package.
package pipeline
