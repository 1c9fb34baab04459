package backend

import (
	"fmt"
	"log/slog"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/extract/pdftext"
	"github.com/docpipe/docpipe/pipeline/ocr"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
	"github.com/docpipe/docpipe/pipeline/steps"
)

// StepOptions choose the step handlers' backends and bounds.
type StepOptions struct {
	// PDFBackend is "auto" (poppler's pdftotext when installed, else pure
	// Go), "poppler" or "go".
	PDFBackend string
	// PageImages is "png" to store every PDF page as an image, "" not to.
	PageImages string
	Logger     *slog.Logger
	// Parallelism bounds the work inside one step invocation (0: cores).
	Parallelism int
	Limits      extract.Limits
	// Pipelines finds each workflow's pipeline version; nil serves only
	// the built-in pipeline.
	Pipelines pipeline.Pipelines
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
		pipelines = pipeline.NewStaticPipelines(pipelinefile.Default())
	}
	steps.Register(reg, steps.Deps{
		Repo:        b.Repo,
		Blobs:       b.Blobs,
		Pipelines:   pipelines,
		PDF:         pdf,
		OCR:         ocr.NewTesseract(),
		PageImages:  o.PageImages,
		Limits:      o.Limits,
		TempDir:     b.TempDir(),
		Parallelism: o.Parallelism,
		Logger:      o.Logger,
	})
	return reg, nil
}
