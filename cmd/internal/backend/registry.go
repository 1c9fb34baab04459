package backend

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/ai"
	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/extract/pdftext"
	"github.com/docpipe/docpipe/pipeline/ocr"
	"github.com/docpipe/docpipe/pipeline/stagerun"
	"github.com/docpipe/docpipe/pipeline/steps"
	"github.com/docpipe/docpipe/pipeline/transcribe"
)

// StepOptions choose the step handlers' backends and bounds.
type StepOptions struct {
	// Recorder records when steps start and finish; nil records each
	// change on its own (see steps.Deps.Recorder).
	Recorder pipeline.StepRecorder
	// PDFBackend is "auto" (poppler's pdftotext when installed, else pure
	// Go), "poppler" or "go".
	PDFBackend string
	// PageImages is "png" to store every PDF page as an image, "" not to.
	PageImages string
	Logger     *slog.Logger
	// Parallelism bounds the work inside one step invocation (0: cores).
	Parallelism int
	Limits      extract.Limits
	// Pipelines finds each workflow's pipeline version; nil: the versions
	// stored in b's table, with the built-in pipeline for workflows that
	// record none.
	Pipelines pipeline.Pipelines
	// PipelineDir, when set, holds one folder per pipeline name where that
	// pipeline's command stages run, instead of the folder its file was
	// applied from (a worker fleet whose scripts live elsewhere).
	PipelineDir string
	// Lambda invokes users' Lambda stages (nil: none can run).
	Lambda stagerun.LambdaInvoker
	// Transcriber turns audio into text; nil: pocketsphinx on this
	// machine (skipped with the reason when it is not installed).
	Transcriber transcribe.Engine
	// OCR recognises page images; nil: tesseract on this machine.
	OCR ocr.Engine
	// AIModels make the models of analysis stages; nil: AIClients over
	// the AWS configuration, loaded when a Bedrock stage first needs it,
	// and this process's environment.
	AIModels ai.Models
}

// Registry builds the step handlers over b: every builtin, the generic
// handlers of users' stages, and the bookkeeping steps.
func Registry(b *Backend, o StepOptions) (*pipeline.Registry, error) {
	if o.PDFBackend == "" {
		o.PDFBackend = "auto"
	}
	if o.PageImages != "" && o.PageImages != "png" {
		return nil, fmt.Errorf("page images: %q is not a format docpipe renders (png)", o.PageImages)
	}
	pdf, err := pdftext.New(o.PDFBackend)
	if err != nil {
		return nil, err
	}
	reg := pipeline.NewRegistry()
	pipelines := o.Pipelines
	if pipelines == nil {
		pipelines = b.Repo
	}
	if o.PipelineDir != "" {
		dir, err := filepath.Abs(o.PipelineDir)
		if err != nil {
			return nil, err
		}
		pipelines = pipelineDir{src: pipelines, root: dir}
	}
	if o.Transcriber == nil {
		o.Transcriber = transcribe.NewPocketsphinx()
	}
	if o.OCR == nil {
		o.OCR = ocr.NewTesseract()
	}
	if o.AIModels == nil {
		o.AIModels = AIClients(AWSConfigOnce(nil), os.Getenv)
	}
	steps.Register(reg, steps.Deps{
		Repo:        b.Repo,
		Blobs:       b.Blobs,
		Pipelines:   pipelines,
		PDF:         pdf,
		OCR:         o.OCR,
		Transcriber: o.Transcriber,
		PageImages:  o.PageImages,
		Limits:      o.Limits,
		TempDir:     b.TempDir(),
		Parallelism: o.Parallelism,
		Logger:      o.Logger,
		Lambda:      o.Lambda,
		AIModels:    o.AIModels,
		Recorder:    o.Recorder,
	})
	return reg, nil
}

// pipelineDir runs every pipeline's commands in root/<pipeline name>.
type pipelineDir struct {
	src  pipeline.Pipelines
	root string
}

func (p pipelineDir) Definition(ctx context.Context, name string, version int) (pipeline.Definition, error) {
	def, err := p.src.Definition(ctx, name, version)
	if err != nil {
		return def, err
	}
	def.Dir = filepath.Join(p.root, def.Name)
	return def, nil
}
