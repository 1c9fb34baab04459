package localrun

import (
	"context"
	"log/slog"
	"sync"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/web"
)

// Engine drives one workflow's execution to its end on this machine
// (statemachine/embedded in docpipe).
type Engine interface {
	Run(ctx context.Context, def pipeline.Definition, version int, input pipeline.ExecutionInput) error
}

// Pipeline is the stored pipeline version new documents run.
type Pipeline struct {
	Name    string
	Version int
}

// Observer hears which workflows run: Track when one starts, Done when it
// ends. A progress display is one.
type Observer interface {
	Track(file string, wf pipeline.Workflow)
	Done(workflowID string)
}

// Options wire a Runtime. Ingester, Engine and Project are required.
type Options struct {
	// Ingester registers documents; its Definition is Pipeline's, and its
	// Repo is the one every workflow is admitted and run through.
	Ingester *pipeline.Ingester
	Engine   Engine
	// Recorder is the batching step recorder the Engine and its handlers
	// share; an admission's step item is handed to it so that the first
	// step starts from it without reading it again. nil: nothing is kept.
	Recorder *pipeline.Recorder
	Project  string   // project new documents join
	Pipeline Pipeline // the version new documents run
	// NoCache starts new workflows with the stage cache off.
	NoCache bool
	// Concurrency is the documents processed at once: the slots of the
	// one scheduler (Shares weighs a document on them).
	Concurrency int
	Logger      *slog.Logger       // nil: nothing is logged
	Observer    Observer           // nil: nobody is told
	Fetch       web.FetcherOptions // how URLs are fetched
	Crawl       web.Limits         // what a URL's registration fetches
	// LeftOut hears of the pages a URL's crawl left out, and why.
	LeftOut func(source string, skip web.Skip)
}

// Runtime registers and runs documents on this machine. Every workflow it
// runs goes through one admission and one set of size-weighted slots,
// whichever command asked for it.
type Runtime struct {
	o         Options
	repo      *pipeline.Repository
	admission *pipeline.Admission
	slots     slots
	running   sync.WaitGroup // workflows started and not yet ended
	web       *web.Fetcher   // fetches URLs; made on first use
}

// New wires a Runtime.
func New(o Options) *Runtime {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Runtime{
		o: o, repo: o.Ingester.Repo,
		admission: pipeline.NewAdmission(o.Ingester.Repo),
		slots:     newSlots(o.Concurrency),
	}
}

// Repo is the repository the runtime works on.
func (rt *Runtime) Repo() *pipeline.Repository { return rt.repo }

// runWorkflow drives a workflow to its end on the pipeline version it
// recorded when it was registered, whatever new documents run now.
func (rt *Runtime) runWorkflow(ctx context.Context, wf pipeline.Workflow) error {
	def, err := rt.repo.WorkflowDefinition(ctx, wf)
	if err != nil {
		rt.admission.Drop(wf)
		return err
	}
	leave, admitted, err := rt.admission.Enter(ctx, wf)
	if err != nil {
		return err
	}
	defer leave()
	if admitted != nil && rt.o.Recorder != nil {
		rt.o.Recorder.Keep(*admitted) // the first step starts from it
	}
	reg := pipeline.Registration{Workflow: wf}
	return rt.o.Engine.Run(ctx, def, wf.PipelineVersion, rt.o.Ingester.ExecutionInput(reg))
}
