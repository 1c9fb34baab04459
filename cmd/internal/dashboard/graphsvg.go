package dashboard

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"math"
	"net/http"
	"slices"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/analyze"
	"github.com/docpipe/docpipe/pipeline/blob"
)

// Graph picture bounds: the heaviest nodes only, so the picture stays
// readable and its size bounded whatever the document.
const (
	svgNodes    = 40
	svgSize     = 640
	maxGraphRaw = 64 << 20
)

// kindColors colour nodes by kind; anything else is grey.
var kindColors = map[string]string{
	"keyword": "#2f6db5", "person": "#b5472f", "organization": "#7a3fb0",
	"location": "#2f8f5b", "date": "#b58a2f", "email": "#5b6770", "amount": "#a0521c",
}

// GET /analyses/{id}/graph.svg draws the keyword/entity graph: the
// heaviest nodes on a circle (heaviest first, clockwise from the top), so
// the same graph always gives the same picture.
func (s *Server) graphSVG(w http.ResponseWriter, r *http.Request) {
	v, err := s.loadAnalysis(r.Context(), r.PathValue("id"), false)
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	raw, err := blob.GetBytes(r.Context(), s.opts.Blobs, v.outputKey(pipeline.GraphBlobKey), maxGraphRaw)
	if errors.Is(err, blob.ErrNotFound) {
		writeError(w, http.StatusNotFound, "no graph yet: graph_builder has not run")
		return
	}
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	var g analyze.Graph
	if err := json.Unmarshal(raw, &g); err != nil {
		s.writeFailure(w, r, fmt.Errorf("graph: %w", err))
		return
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Header().Set("Cache-Control", "no-store")
	writeGraphSVG(w, g)
}

func refOf(wf pipeline.Workflow) pipeline.WorkflowRef {
	return pipeline.WorkflowRef{ProjectID: wf.ProjectID, DocumentID: wf.DocumentID, WorkflowID: wf.ID}
}

type placed struct {
	node analyze.Node
	x, y float64
	r    float64
}

// layoutGraph places the heaviest nodes evenly on a circle.
func layoutGraph(g analyze.Graph) map[string]placed {
	nodes := slices.Clone(g.Nodes)
	slices.SortStableFunc(nodes, func(a, b analyze.Node) int {
		return cmp.Or(cmp.Compare(b.Weight, a.Weight), cmp.Compare(a.ID, b.ID))
	})
	nodes = nodes[:min(len(nodes), svgNodes)]
	maxW := 1
	for _, n := range nodes {
		maxW = max(maxW, n.Weight)
	}
	c := float64(svgSize) / 2
	ring := c - 90
	out := make(map[string]placed, len(nodes))
	for i, n := range nodes {
		a := 2*math.Pi*float64(i)/float64(max(1, len(nodes))) - math.Pi/2
		r := 4 + 10*math.Sqrt(float64(n.Weight)/float64(maxW))
		out[n.ID] = placed{node: n, x: c + ring*math.Cos(a), y: c + ring*math.Sin(a), r: r}
	}
	return out
}

func writeGraphSVG(w io.Writer, g analyze.Graph) {
	pos := layoutGraph(g)
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" font-family="sans-serif" font-size="11">`, svgSize, svgSize, svgSize, svgSize)
	fmt.Fprintf(w, `<rect width="100%%" height="100%%" fill="#fff"/>`)
	if len(pos) == 0 {
		fmt.Fprintf(w, `<text x="%d" y="%d" text-anchor="middle" fill="#666">no keywords or entities</text></svg>`, svgSize/2, svgSize/2)
		return
	}
	maxEdge := 1
	for _, e := range g.Edges {
		maxEdge = max(maxEdge, e.Weight)
	}
	for _, e := range g.Edges {
		a, okA := pos[e.Source]
		b, okB := pos[e.Target]
		if !okA || !okB {
			continue
		}
		width := 0.5 + 3*float64(e.Weight)/float64(maxEdge)
		fmt.Fprintf(w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#9aa7b4" stroke-opacity="0.6" stroke-width="%.2f"/>`, a.x, a.y, b.x, b.y, width)
	}
	ids := make([]string, 0, len(pos))
	for id := range pos {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	c := float64(svgSize) / 2
	for _, id := range ids {
		p := pos[id]
		color, ok := kindColors[p.node.Kind]
		if !ok {
			color = "#6b7280"
		}
		anchor, dx := "start", p.r+3
		if p.x < c {
			anchor, dx = "end", -(p.r + 3)
		}
		label := html.EscapeString(p.node.Label)
		fmt.Fprintf(w, `<g><title>%s (%s, weight %d, %d segments)</title><circle cx="%.1f" cy="%.1f" r="%.1f" fill="%s"/>`,
			label, html.EscapeString(p.node.Kind), p.node.Weight, p.node.SegmentCount, p.x, p.y, p.r, color)
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f" text-anchor="%s" dominant-baseline="middle" fill="#222">%s</text></g>`, p.x+dx, p.y, anchor, label)
	}
	fmt.Fprint(w, `</svg>`)
}
