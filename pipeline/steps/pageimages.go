package steps

import (
	"context"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/ocr"
)

// pageRenderer renders PDF pages for page images, at OCR's resolution so
// that OCR can read the same image.
var pageRenderer = &ocr.Renderer{}

// withPageImages stores every PDF page as a PNG before body (the OCR step)
// runs, when Deps.PageImages asks for it; OCR then reads the stored image
// instead of rendering the page again.
func (h *handlers) withPageImages(body stepFunc) stepFunc {
	return func(ctx context.Context, in pipeline.StepInput, p *workflowPipeline) (outcome, error) {
		if h.PageImages == "" {
			return body(ctx, in, p)
		}
		note, err := h.renderPageImages(ctx, in.Workflow)
		if err != nil {
			return outcome{}, err
		}
		out, err := body(ctx, in, p)
		if note != "" {
			out.message = strings.TrimPrefix(out.message+"; "+note, "; ")
		}
		return out, err
	}
}

// renderPageImages renders the PDF pages that have no stored image yet and
// records their keys in the units. It returns a note for the step's
// message: how many pages it rendered, or why it rendered none.
func (h *handlers) renderPageImages(ctx context.Context, ref pipeline.WorkflowRef) (string, error) {
	var prep prepInfo
	if err := h.getJSON(ctx, pipeline.PrepBlobKey(ref), &prep); err != nil {
		return "", err
	}
	if prep.Format != extract.FormatPDF {
		return "", nil
	}
	if ok, reason := pageRenderer.Available(); !ok {
		return "page images skipped: " + strings.TrimPrefix(reason, "OCR skipped: ") + "; pure Go has no PDF renderer", nil
	}
	var units []unitInfo
	if err := h.getJSON(ctx, pipeline.UnitsBlobKey(ref), &units); err != nil {
		return "", err
	}
	var todo []int
	for i, u := range units {
		if u.ImageKey == "" {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		return "", nil
	}
	path, cleanup, err := h.downloadSource(ctx, ref)
	if err != nil {
		return "", err
	}
	defer cleanup()
	dir, err := os.MkdirTemp(h.TempDir, "docpipe-pages-*")
	if err != nil {
		return "", fmt.Errorf("page images temp dir: %w", err)
	}
	defer os.RemoveAll(dir)
	failed := make([]string, len(units))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(h.parallelism())
	for _, i := range todo {
		g.Go(func() error {
			png, err := pageRenderer.Render(gctx, path, units[i].Index, dir)
			if err != nil {
				if gctx.Err() != nil {
					return gctx.Err()
				}
				failed[i] = err.Error()
				return nil
			}
			defer os.Remove(png)
			b, err := os.ReadFile(png)
			if err != nil {
				return err
			}
			key := pipeline.SegmentImageBlobKey(ref, units[i].Index)
			if err := blob.PutBytes(gctx, h.Blobs, key, b); err != nil {
				return storageErr("write page image", err)
			}
			units[i].ImageKey = key
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return "", err
	}
	if err := h.putJSON(ctx, pipeline.UnitsBlobKey(ref), units); err != nil {
		return "", err
	}
	note := fmt.Sprintf("%d page images", len(todo))
	for _, i := range todo {
		if failed[i] != "" {
			h.logger().Warn("page image not rendered", "workflow", ref.WorkflowID, "page", units[i].Index, "error", failed[i])
			note = fmt.Sprintf("%d page images, page %d and maybe others not rendered: %s", len(todo), units[i].Index, failed[i])
			break
		}
	}
	return note, nil
}
