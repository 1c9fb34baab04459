package steps

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sync/errgroup"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/ocr"
)

// recognize OCRs the units at indices todo, writing each page's text blob.
// A page OCR cannot read fails with the reason (and can be re-run); a page
// is skipped only when no OCR engine is installed.
// It returns how many pages were recognised, and counts each page, read
// or failed, on progress as it ends.
func (h *handlers) recognize(ctx context.Context, ref pipeline.WorkflowRef, prep prepInfo, path string, units []unitInfo, todo []int, progress *pipeline.ProgressRecorder) (int, error) {
	dir, err := os.MkdirTemp(h.TempDir, "docpipe-ocr-*")
	if err != nil {
		return 0, fmt.Errorf("ocr temp dir: %w", err)
	}
	defer os.RemoveAll(dir)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(h.parallelism()) // tesseract runs single-threaded per page
	texts := make([]string, len(units))
	reasons := make([]string, len(units))
	for _, i := range todo {
		g.Go(func() error {
			defer progress.Add(gctx, 1)
			img := path
			switch {
			case units[i].ImageKey != "": // stored by --page-images: not rendered twice
				png := filepath.Join(dir, fmt.Sprintf("stored-%06d.png", units[i].Index))
				if err := h.download(gctx, units[i].ImageKey, png); err != nil {
					return err
				}
				defer os.Remove(png)
				img = png
			case prep.Format == extract.FormatPDF:
				png, err := ocr.RenderPDFPage(gctx, path, units[i].Index, dir)
				if err != nil {
					if gctx.Err() != nil {
						return gctx.Err()
					}
					reasons[i] = ocrFailedPrefix + ": cannot render the page: " + err.Error()
					return nil
				}
				defer os.Remove(png)
				img = png
			}
			text, err := h.OCR.Recognize(gctx, img)
			if err != nil {
				if gctx.Err() != nil {
					return gctx.Err()
				}
				reasons[i] = ocrFailedPrefix + ": " + err.Error()
				return nil
			}
			texts[i] = text
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return 0, err
	}
	n := 0
	for _, i := range todo {
		if reasons[i] != "" {
			units[i].OCRError = reasons[i]
			continue
		}
		if err := blob.PutBytes(ctx, h.Blobs, pipeline.SegmentTextBlobKey(ref, units[i].Index), []byte(texts[i])); err != nil {
			return 0, storageErr("write OCR text", err)
		}
		units[i].OCRDone = true
		units[i].Chars = len(texts[i])
		n++
	}
	return n, nil
}
