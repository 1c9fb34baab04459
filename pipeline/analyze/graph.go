package analyze

import (
	"cmp"
	"slices"
	"strings"
)

// KindKeyword is the node kind of keywords; entity nodes carry their entity
// type (name, date, ...) as kind.
const KindKeyword = "keyword"

// GraphOptions bound the graph. Zero fields take the defaults.
type GraphOptions struct {
	MaxNodes           int // nodes kept (default 200, at most 2,000)
	MaxEdges           int // edges kept (default 1,000)
	MaxNodeSegments    int // segment indices listed per node (default 1,000); SegmentCount has the full count
	MaxItemsPerSegment int // keywords+entities taken from one segment (default 128)
}

// Graph defaults.
const (
	DefaultGraphNodes      = 200
	DefaultGraphEdges      = 1_000
	DefaultNodeSegments    = 1_000
	DefaultItemsPerSegment = 128
)

func (o GraphOptions) withDefaults() GraphOptions {
	o.MaxNodes = clampDefault(o.MaxNodes, DefaultGraphNodes, 2_000)
	o.MaxEdges = clampDefault(o.MaxEdges, DefaultGraphEdges, 100_000)
	o.MaxNodeSegments = clampDefault(o.MaxNodeSegments, DefaultNodeSegments, 1_000_000)
	o.MaxItemsPerSegment = clampDefault(o.MaxItemsPerSegment, DefaultItemsPerSegment, 1_000)
	return o
}

// SegmentInput is one segment's analysis as fed to BuildGraph.
type SegmentInput struct {
	Index  int
	Result SegmentResult
}

// Graph is the keyword and entity co-occurrence graph of a document.
type Graph struct {
	Nodes      []Node `json:"nodes"`
	Edges      []Edge `json:"edges"`
	Segments   int    `json:"segments"`    // segments added
	TotalNodes int    `json:"total_nodes"` // distinct keywords and entities before pruning
}

// Node is a keyword or an entity.
type Node struct {
	ID           string `json:"id"` // kind + ":" + label
	Label        string `json:"label"`
	Kind         string `json:"kind"`
	Weight       int    `json:"weight"`        // total count over all segments
	SegmentCount int    `json:"segment_count"` // segments it appears in
	Segments     []int  `json:"segments"`      // ascending, at most MaxNodeSegments
}

// Edge links two nodes that appear in the same segment; Source < Target.
type Edge struct {
	Source string `json:"source"`
	Target string `json:"target"`
	Weight int    `json:"weight"` // segments where both appear
}

// BuildGraph builds the graph of a whole set of segments at once.
func BuildGraph(segments []SegmentInput) Graph {
	g := NewGraphBuilder(GraphOptions{})
	for _, s := range segments {
		g.Add(s.Index, s.Result)
	}
	return g.Graph()
}

type nodeKey struct{ kind, label string }

type nodeAcc struct {
	key    nodeKey
	id     string
	weight int64
	segs   int32
}

// GraphBuilder accumulates segment results one at a time, so a handler can
// stream them from the blob store. Memory is proportional to the keywords
// and entities added (a few int32 per occurrence), not to the text.
// A GraphBuilder is not safe for concurrent use.
type GraphBuilder struct {
	opts  GraphOptions
	ids   map[nodeKey]int32
	nodes []nodeAcc
	// per segment: its index and its node ids in flat[off[i]:off[i+1]]
	segIndex []int
	off      []int32
	flat     []int32
	seen     map[int]struct{}
}

// NewGraphBuilder returns an empty builder.
func NewGraphBuilder(opts GraphOptions) *GraphBuilder {
	return &GraphBuilder{
		opts: opts.withDefaults(),
		ids:  map[nodeKey]int32{},
		off:  []int32{0},
		seen: map[int]struct{}{},
	}
}

// Add records one segment's keywords and entities. A segment index added
// twice counts once (a retried read must not inflate the graph).
func (g *GraphBuilder) Add(index int, r SegmentResult) {
	if _, dup := g.seen[index]; dup {
		return
	}
	g.seen[index] = struct{}{}
	start := len(g.flat)
	items := 0
	add := func(kind, label string, count int) {
		if items >= g.opts.MaxItemsPerSegment || label == "" || count <= 0 {
			return
		}
		items++
		k := nodeKey{kind, label}
		id, ok := g.ids[k]
		if !ok {
			id = int32(len(g.nodes))
			k = nodeKey{strings.Clone(kind), strings.Clone(label)}
			g.ids[k] = id
			g.nodes = append(g.nodes, nodeAcc{key: k, id: k.kind + ":" + k.label})
		}
		g.nodes[id].weight += int64(count)
		g.flat = append(g.flat, id)
	}
	for _, kw := range r.Keywords {
		add(KindKeyword, kw.Term, kw.Count)
	}
	for _, e := range r.Entities {
		add(e.Type, e.Value, e.Count)
	}
	ids := g.flat[start:]
	slices.Sort(ids)
	ids = slices.Compact(ids)
	g.flat = g.flat[:start+len(ids)]
	for _, id := range ids {
		g.nodes[id].segs++
	}
	g.segIndex = append(g.segIndex, index)
	g.off = append(g.off, int32(len(g.flat)))
}

// Graph returns the pruned graph of everything added so far. Half of the
// node budget goes to entities first, so that keywords, which are counted
// far more often, do not crowd them out; unused budget goes to the heaviest
// remaining nodes.
func (g *GraphBuilder) Graph() Graph {
	out := Graph{Nodes: []Node{}, Edges: []Edge{}, Segments: len(g.segIndex), TotalNodes: len(g.nodes)}
	order := make([]int32, len(g.nodes))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, g.compareNodes)

	maxN := g.opts.MaxNodes
	picked := make([]bool, len(g.nodes))
	var sel []int32
	pick := func(entities bool, quota int) {
		for _, id := range order {
			if len(sel) >= maxN || quota == 0 {
				return
			}
			if !picked[id] && (g.nodes[id].key.kind != KindKeyword) == entities {
				picked[id] = true
				sel = append(sel, id)
				quota--
			}
		}
	}
	pick(true, (maxN+1)/2)
	pick(false, maxN/2)
	for _, id := range order {
		if len(sel) >= maxN {
			break
		}
		if !picked[id] {
			picked[id] = true
			sel = append(sel, id)
		}
	}
	slices.SortFunc(sel, g.compareNodes)

	dense := make([]int32, len(g.nodes))
	for i := range dense {
		dense[i] = -1
	}
	for i, id := range sel {
		dense[id] = int32(i)
	}
	k := len(sel)
	out.Nodes = make([]Node, k)
	for i, id := range sel {
		n := g.nodes[id]
		out.Nodes[i] = Node{ID: n.id, Label: n.key.label, Kind: n.key.kind, Weight: int(n.weight),
			SegmentCount: int(n.segs), Segments: make([]int, 0, min(int(n.segs), g.opts.MaxNodeSegments))}
	}

	// Visit segments in index order so segment lists come out sorted.
	segOrder := make([]int32, len(g.segIndex))
	for i := range segOrder {
		segOrder[i] = int32(i)
	}
	slices.SortFunc(segOrder, func(a, b int32) int { return cmp.Compare(g.segIndex[a], g.segIndex[b]) })
	pairs := make([]int32, k*k)
	var local []int32
	for _, si := range segOrder {
		local = local[:0]
		for _, id := range g.flat[g.off[si]:g.off[si+1]] {
			if d := dense[id]; d >= 0 {
				local = append(local, d)
			}
		}
		slices.Sort(local)
		for x, a := range local {
			if n := &out.Nodes[a]; len(n.Segments) < g.opts.MaxNodeSegments {
				n.Segments = append(n.Segments, g.segIndex[si])
			}
			row := int(a) * k
			for _, b := range local[x+1:] {
				pairs[row+int(b)]++
			}
		}
	}

	for a := range k {
		for b := a + 1; b < k; b++ {
			w := pairs[a*k+b]
			if w == 0 {
				continue
			}
			src, dst := out.Nodes[a].ID, out.Nodes[b].ID
			if dst < src {
				src, dst = dst, src
			}
			out.Edges = append(out.Edges, Edge{Source: src, Target: dst, Weight: int(w)})
		}
	}
	slices.SortFunc(out.Edges, func(a, b Edge) int {
		if c := cmp.Compare(b.Weight, a.Weight); c != 0 {
			return c
		}
		if c := strings.Compare(a.Source, b.Source); c != 0 {
			return c
		}
		return strings.Compare(a.Target, b.Target)
	})
	if len(out.Edges) > g.opts.MaxEdges {
		out.Edges = slices.Clip(out.Edges[:g.opts.MaxEdges])
	}
	return out
}

// compareNodes orders nodes by weight, then segment count, then id.
func (g *GraphBuilder) compareNodes(a, b int32) int {
	na, nb := &g.nodes[a], &g.nodes[b]
	if c := cmp.Compare(nb.weight, na.weight); c != 0 {
		return c
	}
	if c := cmp.Compare(nb.segs, na.segs); c != 0 {
		return c
	}
	return strings.Compare(na.id, nb.id)
}
