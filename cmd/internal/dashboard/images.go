package dashboard

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
)

// maxImageBytes bounds a page image served (a 150 dpi A4 page is ~0.5 MB).
const maxImageBytes = 32 << 20

// apiSegmentImage serves a segment's page image (rendered with
// --page-images png); 404 when the segment has none.
func (s *Server) apiSegmentImage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	index, err := strconv.Atoi(r.PathValue("index"))
	if err != nil || index < 1 {
		writeError(w, http.StatusBadRequest, "segment index must be a number from 1")
		return
	}
	seg, err := s.opts.Repo.GetSegment(r.Context(), id, index)
	if err != nil {
		s.writeFailure(w, r, fmt.Errorf("segment %d of %s: %w", index, id, err))
		return
	}
	if seg.ImageKey == "" {
		writeError(w, http.StatusNotFound, fmt.Sprintf("segment %d of %s has no page image (run with --page-images png)", index, id))
		return
	}
	b, err := blob.GetBytes(r.Context(), s.opts.Blobs, seg.ImageKey, maxImageBytes)
	if errors.Is(err, blob.ErrNotFound) {
		err = fmt.Errorf("page image of segment %d: %w", index, pipeline.ErrNotFound)
	}
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Cache-Control", "private, max-age=86400, immutable") // a workflow's page never changes
	_, _ = w.Write(b)
}
