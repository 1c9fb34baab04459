package pipeline

import (
	"fmt"
	"time"

	"github.com/docpipe/docpipe/pipeline/extract"
)

// WorkflowStatus is the lifecycle of one document's analysis.
type WorkflowStatus string

const (
	WorkflowPending    WorkflowStatus = "pending"
	WorkflowInProgress WorkflowStatus = "in_progress"
	WorkflowCompleted  WorkflowStatus = "completed"
	WorkflowFailed     WorkflowStatus = "failed"
	// WorkflowWaitingReview: a review stage waits for a person's decision;
	// nothing runs meanwhile.
	WorkflowWaitingReview WorkflowStatus = "waiting_review"
)

// Final reports whether a workflow in s has its outcome: completed or
// failed, nothing left to run until a re-run. A workflow waiting for a
// review is not final; it resumes once the review is decided.
func (s WorkflowStatus) Final() bool {
	return s == WorkflowCompleted || s == WorkflowFailed
}

// StepStatus is the lifecycle of one step of a workflow.
type StepStatus string

const (
	StepPending    StepStatus = "pending"
	StepInProgress StepStatus = "in_progress"
	StepCompleted  StepStatus = "completed"
	StepFailed     StepStatus = "failed"
	StepSkipped    StepStatus = "skipped"
)

// SegmentStatus is the lifecycle of one segment.
type SegmentStatus string

const (
	SegmentPending SegmentStatus = "pending"
	SegmentDone    SegmentStatus = "done"
	SegmentFailed  SegmentStatus = "failed"
	SegmentSkipped SegmentStatus = "skipped" // e.g. needs OCR and no OCR engine is installed
)

// Project groups documents and holds the settings their stages read.
type Project struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Settings  ProjectSettings `json:"settings"`
	CreatedAt time.Time       `json:"created_at"`
	// Revision counts changes, so a change applies only to the state it
	// was made from.
	Revision int `json:"revision,omitempty"`
}

// Document is one uploaded file. Its bytes live in the blob store.
type Document struct {
	ProjectID string    `json:"project_id"`
	ID        string    `json:"id"`
	FileName  string    `json:"file_name"`
	FileURI   string    `json:"file_uri"` // where the original came from (path or s3://)
	BlobKey   string    `json:"blob_key"` // where docpipe keeps the bytes
	SHA256    string    `json:"sha256"`
	Size      int64     `json:"size"`
	CreatedAt time.Time `json:"created_at"`
}

// Workflow is one analysis of one document. The same record is stored under
// the project (listing) and under the document (metadata).
type Workflow struct {
	ID            string            `json:"id"`
	ProjectID     string            `json:"project_id"`
	DocumentID    string            `json:"document_id"`
	FileURI       string            `json:"file_uri"`
	FileName      string            `json:"file_name"`
	MIMEType      string            `json:"mime_type,omitempty"`
	ExecutionID   string            `json:"execution_id,omitempty"` // execution name or ARN
	Status        WorkflowStatus    `json:"status"`
	TotalSegments int               `json:"total_segments"`
	Preprocessing map[string]string `json:"preprocessing,omitempty"` // stage → status
	Error         string            `json:"error,omitempty"`
	// Pipeline and PipelineVersion name the stored pipeline version the
	// workflow runs; set at creation, never changed (re-runs keep them).
	Pipeline        string `json:"pipeline,omitempty"`
	PipelineVersion int    `json:"pipeline_version,omitempty"`
	// NoCache: the workflow's stages neither reuse earlier outputs nor
	// offer their own (the stage cache); set at creation.
	NoCache bool `json:"no_cache,omitempty"`
	// Supersedes names the workflow of the same document this one was
	// started to replace (a backfill onto a new version); SupersededBy is
	// the other end of the link, set in the same write.
	Supersedes   string    `json:"supersedes,omitempty"`
	SupersededBy string    `json:"superseded_by,omitempty"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
}

// StepState is one step's entry in the step item.
type StepState struct {
	Status    StepStatus `json:"status"`
	Label     string     `json:"label"`
	StartedAt string     `json:"started_at,omitempty"` // RFC 3339, "" until started
	EndedAt   string     `json:"ended_at,omitempty"`
	Error     string     `json:"error,omitempty"`
	// Progress is how far a long step is, while it runs (RecordStepProgress).
	Progress *StepRunProgress `json:"progress,omitempty"`
	// SegmentsFailed counts, for a segment stage, the segments it failed
	// itself (the workflow's counters hold every stage's).
	SegmentsFailed int `json:"segments_failed,omitempty"`
	// ReusedFrom names the workflow whose output a completed step reused
	// rather than running (the stage cache).
	ReusedFrom string `json:"reused_from,omitempty"`
	// Output, for a document stage that reused another workflow's output,
	// is the blob holding it, where its producer wrote it: nothing is
	// copied, and every reader finds it through StageOutputKey.
	Output string `json:"output,omitempty"`
	// SegmentsReused and SegmentsRun count, for a segment stage, the
	// segments it answered from another workflow's output and those it
	// ran; SegmentsOwn those it answered from the workflow's own earlier
	// answers, their inputs the same (a re-run, a repeated page).
	SegmentsReused int `json:"segments_reused,omitempty"`
	SegmentsRun    int `json:"segments_run,omitempty"`
	SegmentsOwn    int `json:"segments_reused_own,omitempty"`
}

// OwnOutputNote is the note of a document stage that completed without
// running because its output from the workflow's last run has the same
// definition and inputs (a re-run): not reused from another workflow, but
// not run either.
const OwnOutputNote = "unchanged since its last run"

// Reused says the step completed without running: its output is another
// workflow's.
func (s StepState) Reused() bool { return s.Status == StepCompleted && s.ReusedFrom != "" }

// NotRun says a completed step answered without running: from another
// workflow's output (Reused), or from the workflow's own earlier output,
// its definition and inputs unchanged (OwnOutputNote for a document
// stage; a segment stage that ran no segment and reused some).
func (s StepState) NotRun() bool {
	if s.Status != StepCompleted {
		return false
	}
	return s.ReusedFrom != "" || s.Error == OwnOutputNote || s.SegmentsRun == 0 && s.SegmentsReused+s.SegmentsOwn > 0
}

// StepRunProgress is a running step's own progress: done of total units
// ("pages") at the time At, which with the step's StartedAt gives a rate
// and so an estimate of the time left.
type StepRunProgress struct {
	Done  int    `json:"done"`
	Total int    `json:"total"`
	Unit  string `json:"unit"`
	At    string `json:"at"` // RFC 3339
}

// Remaining estimates the time left from the rate so far, given when the
// step started; false when there is no rate yet.
func (p StepRunProgress) Remaining(startedAt string) (time.Duration, bool) {
	start, err1 := time.Parse(time.RFC3339Nano, startedAt)
	at, err2 := time.Parse(time.RFC3339Nano, p.At)
	if err1 != nil || err2 != nil || p.Done <= 0 || p.Total < p.Done || !at.After(start) {
		return 0, false
	}
	perUnit := at.Sub(start) / time.Duration(p.Done)
	return perUnit * time.Duration(p.Total-p.Done), true
}

// StepProgress is the step item: every step's status plus segment counters.
// This is what "how far along is it" reads.
type StepProgress struct {
	WorkflowID      string               `json:"workflow_id"`
	ProjectID       string               `json:"project_id"`
	DocumentID      string               `json:"document_id"`
	FileName        string               `json:"file_name"`
	Status          WorkflowStatus       `json:"status"`
	Steps           map[string]StepState `json:"steps"`
	TotalSegments   int                  `json:"total_segments"`
	SegmentsDone    int                  `json:"segments_done"`
	SegmentsFailed  int                  `json:"segments_failed"`
	SegmentsSkipped int                  `json:"segments_skipped"`
	Error           string               `json:"error,omitempty"`
	Pipeline        string               `json:"pipeline,omitempty"`
	PipelineVersion int                  `json:"pipeline_version,omitempty"`
	// NoCache: the workflow's stages neither reuse earlier outputs nor
	// offer their own (the stage cache).
	NoCache   bool   `json:"no_cache,omitempty"`
	UpdatedAt string `json:"updated_at"`
}

// SegmentCount says n segments in words: "1 segment", "3 segments".
func SegmentCount(n int) string {
	if n == 1 {
		return "1 segment"
	}
	return fmt.Sprintf("%d segments", n)
}

// Doing says what a workflow is doing, for people: the step it runs (of
// several running, the one that started first, by name among equals),
// else its outcome once it has ended, else "waiting" (pending, or between
// steps) or its status ("waiting_review").
func (p StepProgress) Doing() string {
	if p.Status.Final() {
		return p.Outcome()
	}
	current := p.firstStep(StepInProgress, func(st StepState) string { return st.StartedAt })
	switch {
	case current != "":
		return current
	case p.Status == WorkflowPending || p.Status == WorkflowInProgress:
		return "waiting"
	}
	return string(p.Status)
}

// FailedStep names the step a failed workflow failed in, for people: of
// its failed steps the one that ended first (by name among equals), since
// the others may have failed only because it did. "" for a workflow that
// is not failed, or that failed with no step failed (stopped from
// outside: a timeout, an abort the reconciler recorded).
func (p StepProgress) FailedStep() string {
	if p.Status != WorkflowFailed {
		return ""
	}
	return p.firstStep(StepFailed, func(st StepState) string { return st.EndedAt })
}

// firstStep is the step in status whose time (when) is the earliest, by
// name among equals (a map has no order of its own); "" for none.
func (p StepProgress) firstStep(status StepStatus, when func(StepState) string) string {
	first, at := "", ""
	for name, st := range p.Steps {
		if st.Status != status {
			continue
		}
		if t := when(st); first == "" || t < at || (t == at && name < first) {
			first, at = name, t
		}
	}
	return first
}

// Outcome says how far a workflow got, for people: its status, and for a
// completed one with failed segments how many ("completed, 1 segment
// failed"), so a partial result never reads as a whole one.
func (p StepProgress) Outcome() string {
	if p.Status == WorkflowCompleted && p.SegmentsFailed > 0 {
		return fmt.Sprintf("%s, %s failed", p.Status, SegmentCount(p.SegmentsFailed))
	}
	return string(p.Status)
}

// SegmentCounts is what a step that finished segments reports: "3
// segments done, 1 failed, 0 skipped".
func (p StepProgress) SegmentCounts() string {
	return fmt.Sprintf("%s done, %d failed, %d skipped", SegmentCount(p.SegmentsDone), p.SegmentsFailed, p.SegmentsSkipped)
}

// EverySegmentFailed says the workflow has segments and every one of them
// ended failed: a workflow that fails with no result.
func (p StepProgress) EverySegmentFailed() bool {
	return p.SegmentsFailed > 0 && p.SegmentsFailed == p.TotalSegments
}

// Segment is one page or section of a document. Its text and analysis live
// in the blob store; the item keeps only small fields.
type Segment struct {
	WorkflowID string        `json:"workflow_id"`
	Index      int           `json:"index"` // 1-based
	Kind       string        `json:"kind"`  // "page" or "section"
	Status     SegmentStatus `json:"status"`
	Source     string        `json:"source,omitempty"` // "text", "ocr"
	TextKey    string        `json:"text_key"`
	// ImageKey is the page rendered as PNG (--page-images), "" when none.
	ImageKey string `json:"image_key,omitempty"`
	// Span is the stretch of an audio document the segment transcribes,
	// nil for text.
	Span      *extract.Span `json:"span,omitempty"`
	ResultKey string        `json:"result_key,omitempty"`
	Chars     int           `json:"chars"`
	Language  string        `json:"language,omitempty"`
	Keywords  []string      `json:"keywords,omitempty"` // top few only
	Error     string        `json:"error,omitempty"`
	// Stage is the stage that failed or skipped the segment.
	Stage     string `json:"stage,omitempty"`
	UpdatedAt string `json:"updated_at,omitempty"`
}

// Transition is one audit record of a step status change.
type Transition struct {
	ID         string     `json:"id"`
	WorkflowID string     `json:"workflow_id"`
	Step       string     `json:"step"`
	From       StepStatus `json:"from"`
	To         StepStatus `json:"to"`
	Error      string     `json:"error,omitempty"`
	At         string     `json:"at"`
	// Actor is who made the change: a reviewer's name for review actions,
	// empty for the pipeline's own steps.
	Actor string `json:"actor,omitempty"`
	// ActorUnverified marks an Actor that is only the name someone typed
	// (a shared token, or none), not an identity a user's own token
	// proved.
	ActorUnverified bool `json:"actor_unverified,omitempty"`
	// ReusedFrom, on a completion, names the workflow whose output the
	// step reused instead of running.
	ReusedFrom string `json:"reused_from,omitempty"`
}

// ActorLabel is the actor as the audit trail shows it.
func (t Transition) ActorLabel() string {
	if t.Actor != "" && t.ActorUnverified {
		return t.Actor + " (unverified)"
	}
	return t.Actor
}

// data is the transition as its item's data, as encode would make it:
// the audit item every step change writes, built without a JSON round
// trip.
func (t Transition) data() map[string]any {
	m := map[string]any{"id": t.ID, "workflow_id": t.WorkflowID, "step": t.Step, "from": string(t.From), "to": string(t.To), "at": t.At}
	if t.Error != "" {
		m["error"] = t.Error
	}
	if t.Actor != "" {
		m["actor"] = t.Actor
	}
	if t.ActorUnverified {
		m["actor_unverified"] = true
	}
	if t.ReusedFrom != "" {
		m["reused_from"] = t.ReusedFrom
	}
	return m
}

// TimeFormat renders timestamps stored in keys and items: fixed width, so
// lexical order is time order.
const TimeFormat = "2006-01-02T15:04:05.000000000Z"

// FormatTime renders t in UTC with TimeFormat.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeFormat) }
