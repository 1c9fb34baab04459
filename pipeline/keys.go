package pipeline

import (
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/docpipe/docpipe/pipeline/table"
)

// StatusShards is the number of GSI1 partitions the status index is spread
// over, so that one hot partition never throttles the table. Readers query
// every shard and merge.
const StatusShards = 8

// Key builders: the only place the single-table key layout is spelled out.

func ProjectKey(projectID string) table.Key {
	return table.Key{PK: "PROJ#" + projectID, SK: "META"}
}

func DocumentKey(projectID, documentID string) table.Key {
	return table.Key{PK: "PROJ#" + projectID, SK: "DOC#" + documentID}
}

// ProjectWorkflowKey is the workflow item listed under its project.
func ProjectWorkflowKey(projectID, workflowID string) table.Key {
	return table.Key{PK: "PROJ#" + projectID, SK: "WF#" + workflowID}
}

// WorkflowKey is the workflow metadata item, under its document.
func WorkflowKey(documentID, workflowID string) table.Key {
	return table.Key{PK: "DOC#" + documentID, SK: "WF#" + workflowID}
}

// StepKey is the item holding every step's status and the segment counters.
func StepKey(workflowID string) table.Key {
	return table.Key{PK: "WF#" + workflowID, SK: "STEP"}
}

// SegmentKey addresses one segment; the index is zero-padded to 6 digits
// so that key order is index order past 9,999 pages.
func SegmentKey(workflowID string, index int) table.Key {
	return table.Key{PK: "WF#" + workflowID, SK: SegmentSK(index)}
}

func SegmentSK(index int) string { return fmt.Sprintf("SEG#%06d", index) }

func TransitionKey(workflowID, transitionID string) table.Key {
	return table.Key{PK: "WF#" + workflowID, SK: "TRANSITION#" + transitionID}
}

// Prefixes for queries.
const (
	PrefixProject    = "PROJ#"
	PrefixDocument   = "DOC#"
	PrefixWorkflow   = "WF#"
	PrefixSegment    = "SEG#"
	PrefixTransition = "TRANSITION#"
	PrefixFile       = "FILE#"
)

// StatusShard returns the GSI1 shard of a workflow: a stable hash of its id.
func StatusShard(workflowID string) int {
	h := fnv.New32a()
	h.Write([]byte(workflowID))
	return int(h.Sum32() % StatusShards)
}

// StatusIndexPK is the GSI1 partition key of shard n.
func StatusIndexPK(shard int) string { return fmt.Sprintf("STEP#ANALYSIS_STATUS#%d", shard) }

// StatusIndexSK is the GSI1 sort key: status, then update time (RFC 3339
// with fixed-width fraction, so lexical order is time order), then workflow.
func StatusIndexSK(status WorkflowStatus, updated string, workflowID string) string {
	return StatusIndexSKPrefix(status) + updated + "#" + workflowID
}

// StatusIndexSKPrefix is the start of every GSI1 sort key of workflows in
// status.
func StatusIndexSKPrefix(status WorkflowStatus) string { return string(status) + "#" }

// ContentIndexPK is the GSI2 partition key grouping documents by content.
func ContentIndexPK(sha256hex string) string { return PrefixFile + sha256hex }

// Pipeline versions. A version and its stages share the version's sort-key
// prefix, so one Query on VERSION#<n> reads the whole version. Stage
// positions have 3 digits: a version is written in one transaction, which
// caps it far below 1,000 stages.

// PipelineVersionKey is one immutable version of a pipeline.
func PipelineVersionKey(name string, version int) table.Key {
	return table.Key{PK: PrefixPipeline + name, SK: PipelineVersionSK(version)}
}

// PipelineVersionSK is the sort key of a version, and the prefix of its stages.
func PipelineVersionSK(version int) string { return fmt.Sprintf("VERSION#%06d", version) }

// PipelineStageKey is the stage at position i (0-based, definition order)
// of a version.
func PipelineStageKey(name string, version, i int) table.Key {
	return table.Key{PK: PrefixPipeline + name, SK: fmt.Sprintf("%s%s%03d", PipelineVersionSK(version), stageInfix, i)}
}

// stageInfix sets a stage's sort key apart from its version's.
const stageInfix = "#STAGE#"

// IsPipelineStageSK reports whether sk, under a pipeline's partition, is
// a stage's (PipelineStageKey) rather than a version's.
func IsPipelineStageSK(sk string) bool { return strings.Contains(sk, stageInfix) }

// PipelineCurrentKey points at a pipeline's current version.
func PipelineCurrentKey(name string) table.Key {
	return table.Key{PK: PrefixPipeline + name, SK: "CURRENT"}
}

// PipelineRegistryKey is a pipeline's entry in the one partition that lists
// every pipeline, so that listing them is a Query rather than a Scan.
func PipelineRegistryKey(name string) table.Key {
	return table.Key{PK: PipelineRegistryPK, SK: PrefixPipeline + name}
}

// PipelineRegistryPK is the partition listing every pipeline.
const PipelineRegistryPK = "PIPELINES"

// Pipeline key prefixes. PrefixPipeline also starts GSI2PK of workflow
// items: PIPELINE#<name> / WF#<w> lists a pipeline's workflows.
const (
	PrefixPipeline        = "PIPELINE#"
	PrefixPipelineVersion = "VERSION#"
)

// PipelineIndexPK is the GSI2 partition key grouping workflows by pipeline.
func PipelineIndexPK(name string) string { return PrefixPipeline + name }

// Admission.

// ProjectSlotsKey is the item counting a project's running workflows.
func ProjectSlotsKey(projectID string) table.Key {
	return table.Key{PK: PrefixProject + projectID, SK: "SLOTS"}
}

// The outbox.

// PrefixEvent starts every outbox item's sort key.
const PrefixEvent = "EVENT#"

// EventKey addresses one outbox item, under its workflow.
func EventKey(workflowID, eventID string) table.Key {
	return table.Key{PK: PrefixWorkflow + workflowID, SK: PrefixEvent + eventID}
}

// OutboxIndexPK is the GSI1 partition of an outbox item in state (pending
// or dead) on shard. A workflow's events share its status shard, so one
// partition holds them in order.
func OutboxIndexPK(state DeliveryState, shard int) string {
	return fmt.Sprintf("OUTBOX#%s#%d", strings.ToUpper(string(state)), shard)
}

// Review keys: the item beside the workflow's step item; GSI1 lists open
// reviews by due date and decided ones the pipeline has not taken yet;
// GSI2 lists a reviewer's reviews by due date.
func ReviewKey(workflowID, stage string) table.Key {
	return table.Key{PK: PrefixWorkflow + workflowID, SK: PrefixReview + stage}
}

const (
	PrefixReview = "REVIEW#"
	PrefixOwner  = "OWNER#"
)

func ReviewOpenIndexPK(shard int) string    { return fmt.Sprintf("REVIEW#OPEN#%d", shard) }
func ReviewDecidedIndexPK(shard int) string { return fmt.Sprintf("REVIEW#DECIDED#%d", shard) }
func ReviewOwnerIndexPK(name string) string { return PrefixOwner + name }

// ReviewIndexSK is a review's sort key on the review indexes: when it is
// due (open) or was decided, then its workflow.
func ReviewIndexSK(at, workflowID string) string { return at + "#" + workflowID }

// Per-project sinks: PK "SINKS", SK "PROJ#<p>" (rather than under the
// project's own partition) so that one Query lists every project that has
// sinks: a relay learns whether it has anything to deliver without a
// scan. Projects are few, so the partition stays small.

// PKSinks is the partition holding every project's sinks.
const PKSinks = "SINKS"

// ProjectSinksKey addresses one project's sinks.
func ProjectSinksKey(projectID string) table.Key {
	return table.Key{PK: PKSinks, SK: PrefixProject + projectID}
}

// PKProjects is the GSI2 partition every project item is listed under, so
// that listing the projects is one Query. Projects are few, so the
// partition stays small.
const PKProjects = "PROJECTS"

// projectIndex puts a project item on GSI2 under PKProjects, by id.
func projectIndex(projectID string) []string {
	return []string{table.AttrGSI2PK, PKProjects, table.AttrGSI2SK, PrefixProject + projectID}
}

// Evaluation runs: one item per pipeline version scored on a truth set,
// in the pipeline's own partition, so "the last N runs of NAME, newest
// first" is one reverse Query on EVAL#. The sort key starts with the run's
// time (TimeFormat: lexical order is time order) and ends with the run's
// id, so runs in the same instant stay apart. The item is also on GSI2
// under the same partition with the version first, so "the last N runs of
// NAME@V" is one Query too. Neither prefix meets the partition's other
// sort keys (VERSION#, CURRENT; WF# on GSI2).

// PrefixEval starts every evaluation run's sort key, on the table and on GSI2.
const PrefixEval = "EVAL#"

// EvalRunKey addresses one evaluation run of a pipeline.
func EvalRunKey(name string, at time.Time, runID string) table.Key {
	return table.Key{PK: PrefixPipeline + name, SK: PrefixEval + FormatTime(at) + "#" + runID}
}

// EvalVersionIndexSKPrefix is the GSI2 sort-key prefix of one version's
// evaluation runs (under PipelineIndexPK).
func EvalVersionIndexSKPrefix(version int) string {
	return fmt.Sprintf("%s%06d#", PrefixEval, version)
}

// EvalVersionIndexSK is an evaluation run's GSI2 sort key: its version,
// then the same time and id as its table sort key.
func EvalVersionIndexSK(version int, at time.Time, runID string) string {
	return EvalVersionIndexSKPrefix(version) + FormatTime(at) + "#" + runID
}

// The stage cache: one item per cache key, PK "CACHE#<key>", SK "CACHE".
// Every lookup is a GetItem by the key the step has just computed, so the
// item needs no index; a partition per key spreads a backfill's lookups
// over the whole table (DynamoDB never sees a hot partition), and the
// item holds only the producer and a blob key, never the output itself.
// Segment stages are keyed per segment, so one item per segment.

// PrefixCache starts every stage cache item's partition key.
const PrefixCache = "CACHE#"

// StageCacheKey addresses the cached output under a cache key.
func StageCacheKey(key string) table.Key {
	return table.Key{PK: PrefixCache + key, SK: "CACHE"}
}
