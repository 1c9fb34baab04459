package pipeline

// Scope says what one invocation of a stage works on.
type Scope string

const (
	ScopeDocument     Scope = "document"      // once per workflow
	ScopeSegmentBatch Scope = "segment_batch" // once per manifest batch, fanned out by a Distributed Map
)

// Stage names: the default pipeline, in order.
const (
	StepSegmentPrep        = "segment_prep"
	StepFormatParser       = "format_parser"
	StepOCR                = "ocr"
	StepSegmentBuilder     = "segment_builder"
	StepSegmentAnalyzer    = "segment_analyzer"
	StepGraphBuilder       = "graph_builder"
	StepDocumentSummarizer = "document_summarizer"
)

// Bookkeeping steps that are tasks in the state machine but not stages of
// the analysis: finalize decides the outcome from the segment counters;
// workflow_failed records a caught failure.
const (
	StepFinalize       = "finalize"
	StepWorkflowFailed = "workflow_failed"
)

// RetryPolicy is how a stage's transient failures are retried (jittered
// exponential backoff). Permanent errors are never retried.
type RetryPolicy struct {
	MaxAttempts     int     `json:"max_attempts"`
	IntervalSeconds int     `json:"interval_seconds"`
	BackoffRate     float64 `json:"backoff_rate"`
	MaxDelaySeconds int     `json:"max_delay_seconds"`
}

// Stage is one step of the pipeline definition.
type Stage struct {
	Name           string      `json:"name"`
	Label          string      `json:"label"`
	Scope          Scope       `json:"scope"`
	Retryable      bool        `json:"retryable"` // false: even transient errors fail at once
	Retry          RetryPolicy `json:"retry"`
	TimeoutSeconds int         `json:"timeout_seconds"`
}

// Definition is the whole pipeline as data. The state machine is generated
// from it.
type Definition struct {
	Name   string  `json:"name"`
	Stages []Stage `json:"stages"`
	// BatchSize is how many segments one segment_batch invocation handles.
	BatchSize int `json:"batch_size"`
	// MaxConcurrency bounds the fan-out of segment batches.
	MaxConcurrency int `json:"max_concurrency"`
}

// DefaultRetry is the transient-failure policy of the default stages.
var DefaultRetry = RetryPolicy{MaxAttempts: 4, IntervalSeconds: 1, BackoffRate: 2, MaxDelaySeconds: 30}

// DefaultDefinition is docpipe's pipeline.
func DefaultDefinition() Definition {
	doc := func(name, label string, timeout int) Stage {
		return Stage{Name: name, Label: label, Scope: ScopeDocument, Retryable: true, Retry: DefaultRetry, TimeoutSeconds: timeout}
	}
	return Definition{
		Name: "docpipe",
		Stages: []Stage{
			doc(StepSegmentPrep, "Sniff format, validate and plan", 300),
			doc(StepFormatParser, "Extract text", 900),
			doc(StepOCR, "OCR image pages", 900),
			doc(StepSegmentBuilder, "Write segments and manifest", 900),
			{Name: StepSegmentAnalyzer, Label: "Analyze segments", Scope: ScopeSegmentBatch, Retryable: true, Retry: DefaultRetry, TimeoutSeconds: 900},
			doc(StepGraphBuilder, "Build graph", 900),
			doc(StepDocumentSummarizer, "Summarize document", 900),
		},
		BatchSize:      100,
		MaxConcurrency: 8,
	}
}

// Stage returns the stage with the given name.
func (d Definition) Stage(name string) (Stage, bool) {
	for _, s := range d.Stages {
		if s.Name == name {
			return s, true
		}
	}
	return Stage{}, false
}

// StepNames returns the stage names in order followed by the bookkeeping
// steps: every task name the state machine can invoke.
func (d Definition) StepNames() []string {
	var names []string
	for _, s := range d.Stages {
		names = append(names, s.Name)
	}
	return append(names, StepFinalize, StepWorkflowFailed)
}
