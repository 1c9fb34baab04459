package pdftext

import (
	"errors"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

// The library's Page.Content re-parses the font dictionary (with its
// /Widths array) on every Tf and looks widths up through the object model
// for every glyph; on generated documents that halves throughput. This
// interpreter reads content streams itself (content.go), within the
// page's limits, parses fonts once per document, applies word spacing
// (Tw) that the library ignores, and follows form XObjects, where many
// producers put their text.

// affine is a PDF transformation matrix [a b c d e f].
type affine [6]float64

var identity = affine{1, 0, 0, 1, 0, 0}

// mul returns m × n (apply m, then n).
func (m affine) mul(n affine) affine {
	return affine{
		m[0]*n[0] + m[1]*n[2], m[0]*n[1] + m[1]*n[3],
		m[2]*n[0] + m[3]*n[2], m[2]*n[1] + m[3]*n[3],
		m[4]*n[0] + m[5]*n[2] + n[4], m[4]*n[1] + m[5]*n[3] + n[5],
	}
}

// translate returns translate(tx, ty) × m.
func (m affine) translate(tx, ty float64) affine {
	m[4] += tx*m[0] + ty*m[2]
	m[5] += tx*m[1] + ty*m[3]
	return m
}

func matrixArgs(args []operand) (affine, bool) {
	if len(args) != 6 {
		return identity, false
	}
	var m affine
	for i, a := range args {
		m[i] = a.num
	}
	return m, true
}

// fontInfo is a font parsed once: its decoder and advance widths.
type fontInfo struct {
	enc pdf.TextEncoding
	// byteText is what enc decodes each single-byte code to, for the
	// encodings that decode every byte on its own: the library's
	// /Differences decoder scans the whole array, through the object
	// model, for every byte it decodes.
	byteText  *[256]string
	first     int
	widths    []float64
	composite bool // Type0: multi-byte codes, widths not in /Widths
	twoByte   bool // Type0 with Identity-H/V: two-byte codes
	cidWidths map[int]float64
	cidDW     float64
}

// cidWidth is the advance of a code of a two-byte Identity font, whose
// codes are its CIDs.
func (f *fontInfo) cidWidth(cid int) float64 {
	if w, ok := f.cidWidths[cid]; ok {
		return w
	}
	return f.cidDW
}

func (f *fontInfo) width(code int) float64 {
	if i := code - f.first; i >= 0 && i < len(f.widths) && f.widths[i] > 0 {
		return f.widths[i]
	}
	return estWidth * 1000
}

// fontCache holds parsed fonts for one document, keyed by the font's
// object identity, and per resources dictionary by resource name.
type fontCache struct {
	byObject map[uint64]*fontInfo
	byRes    map[resKey]*fontInfo
}

type resKey struct {
	res  uint64
	name string
}

func newFontCache() *fontCache {
	return &fontCache{byObject: map[uint64]*fontInfo{}, byRes: map[resKey]*fontInfo{}}
}

func (c *fontCache) font(res pdf.Value, name string) *fontInfo {
	resID, resOK := objectID(res)
	if resOK {
		if f, ok := c.byRes[resKey{resID, name}]; ok {
			return f
		}
	}
	v := res.Key("Font").Key(name)
	id, idOK := objectID(v)
	f := c.byObject[id]
	if !idOK || f == nil {
		f = parseFont(v)
		if idOK {
			c.byObject[id] = f
		}
	}
	if resOK {
		c.byRes[resKey{resID, name}] = f
	}
	return f
}

func parseFont(v pdf.Value) *fontInfo {
	pf := pdf.Font{V: v}
	f := &fontInfo{first: int(v.Key("FirstChar").Int64()), composite: v.Key("Subtype").Name() == "Type0"}
	if enc := pf.Encoder(); enc != nil {
		f.enc = enc
		if decodesByteByByte(v) {
			f.byteText = byteTable(enc)
		}
	}
	if f.composite {
		switch v.Key("Encoding").Name() {
		case "Identity-H", "Identity-V":
			f.twoByte = true
			parseCIDWidths(f, v.Key("DescendantFonts").Index(0))
		}
		return f
	}
	ws := v.Key("Widths")
	f.widths = make([]float64, ws.Len())
	for i := range f.widths {
		f.widths[i] = ws.Index(i).Float64()
	}
	return f
}

// decodesByteByByte tells whether the library decodes the simple font v
// one byte at a time, each byte to one character: with an /Encoding
// dictionary (base encoding plus /Differences) or one of the byte tables
// WinAnsiEncoding and MacRomanEncoding. ToUnicode maps may have codes of
// several bytes and named encodings it does not know pass bytes through
// unchanged (not always one character each), so those keep their
// decoder.
func decodesByteByByte(v pdf.Value) bool {
	if v.Key("Subtype").Name() == "Type0" {
		return false
	}
	switch enc := v.Key("Encoding"); enc.Kind() {
	case pdf.Dict:
		return true
	case pdf.Name:
		switch enc.Name() {
		case "WinAnsiEncoding", "MacRomanEncoding":
			return true
		}
	}
	return false
}

// byteTable decodes every single-byte code once.
func byteTable(enc pdf.TextEncoding) *[256]string {
	var t [256]string
	for b := range t {
		t[b] = enc.Decode(string([]byte{byte(b)}))
	}
	return &t
}

// parseCIDWidths reads a CIDFont's /DW and /W: runs "c [w1 w2 ...]" and
// ranges "c1 c2 w".
func parseCIDWidths(f *fontInfo, cidFont pdf.Value) {
	f.cidDW = 1000
	if dw := cidFont.Key("DW"); dw.Kind() == pdf.Integer || dw.Kind() == pdf.Real {
		f.cidDW = dw.Float64()
	}
	f.cidWidths = map[int]float64{}
	w := cidFont.Key("W")
	for i := 0; i < w.Len(); {
		first := int(w.Index(i).Int64())
		if next := w.Index(i + 1); next.Kind() == pdf.Array {
			for j := range next.Len() {
				f.cidWidths[first+j] = next.Index(j).Float64()
			}
			i += 2
			continue
		}
		last, width := int(w.Index(i+1).Int64()), w.Index(i+2).Float64()
		for c := first; c <= last && c-first < 1<<16; c++ {
			f.cidWidths[c] = width
		}
		i += 3
	}
}

type textState struct {
	ctm, tm, tlm       affine
	tc, tw, th, tl, ts float64
	tfs                float64
	font               *fontInfo
}

// maxFormDepth bounds nested form XObjects (which can also be cyclic).
const maxFormDepth = 8

// interpreter collects positioned glyphs from one page.
type interpreter struct {
	fonts  *fontCache
	glyphs []glyph
	layout layout
	limits extract.Limits
	budget *budget
	err    error // a limit passed: the page, and the document, fail
	// One scanner per form depth, reused from stream to stream.
	scanners [maxFormDepth + 1]scanner
}

func newInterpreter(limits extract.Limits) *interpreter {
	limits = limits.WithDefaults()
	return &interpreter{fonts: newFontCache(), limits: limits}
}

// page returns the page's glyphs, or a TooLargeError when the page is over
// a limit.
func (in *interpreter) page(p treePage) ([]glyph, error) {
	// A page near the glyph limit leaves a large buffer; the next pages
	// need a fraction of it.
	if cap(in.glyphs) > 1<<16 {
		in.glyphs = nil
	}
	in.glyphs = in.glyphs[:0]
	in.err = nil
	in.budget = newBudget(in.limits.MaxPageContentBytes, in.limits.MaxContentStreamBytes)
	contents := p.dict.Key("Contents")
	if contents.Kind() == pdf.Null {
		return nil, nil
	}
	in.run(contents, p.resources, identity, 0)
	return in.glyphs, in.err
}

func (in *interpreter) run(strm, res pdf.Value, ctm affine, depth int) {
	g := textState{ctm: ctm, tm: identity, tlm: identity, th: 1}
	var stack []textState
	sc := &in.scanners[depth]
	sc.reset(contentReader(strm, in.budget))
	for in.err == nil {
		op, ok := sc.next()
		if !ok {
			break
		}
		in.do(op, sc.operands, &g, &stack, res, depth)
	}
	var tooLarge *steperr.TooLargeError
	if errors.As(sc.err, &tooLarge) && in.err == nil {
		in.err = sc.err
	}
}

// do runs one operator.
func (in *interpreter) do(op string, args []operand, gp *textState, stack *[]textState, res pdf.Value, depth int) {
	g := *gp
	defer func() { *gp = g }()
	arg := func(i int) float64 {
		if i < len(args) {
			return args[i].num
		}
		return 0
	}
	switch op {
	case "q":
		if len(*stack) < 1024 {
			*stack = append(*stack, g)
		}
	case "Q":
		if n := len(*stack); n > 0 {
			g = (*stack)[n-1]
			*stack = (*stack)[:n-1]
		}
	case "cm":
		if m, ok := matrixArgs(args); ok {
			g.ctm = m.mul(g.ctm)
		}
	case "BT":
		g.tm, g.tlm = identity, identity
	case "Tc":
		g.tc = arg(0)
	case "Tw":
		g.tw = arg(0)
	case "Tz":
		g.th = arg(0) / 100
	case "TL":
		g.tl = arg(0)
	case "Ts":
		g.ts = arg(0)
	case "Tf":
		if len(args) == 2 && args[0].kind == opName {
			g.font = in.fonts.font(res, args[0].str)
			g.tfs = args[1].num
		}
	case "Td":
		g.tlm = g.tlm.translate(arg(0), arg(1))
		g.tm = g.tlm
	case "TD":
		g.tl = -arg(1)
		g.tlm = g.tlm.translate(arg(0), arg(1))
		g.tm = g.tlm
	case "Tm":
		if m, ok := matrixArgs(args); ok {
			g.tm, g.tlm = m, m
		}
	case "T*":
		g.tlm = g.tlm.translate(0, -g.tl)
		g.tm = g.tlm
	case "Tj":
		if len(args) == 1 {
			in.show(&g, args[0].str)
		}
	case "'", "\"":
		if op == "\"" && len(args) == 3 {
			g.tw, g.tc = arg(0), arg(1)
			args = args[2:]
		}
		g.tlm = g.tlm.translate(0, -g.tl)
		g.tm = g.tlm
		if len(args) == 1 {
			in.show(&g, args[0].str)
		}
	case "TJ":
		if len(args) != 1 {
			return
		}
		for _, x := range args[0].arr {
			if x.kind == opString {
				in.show(&g, x.str)
			} else {
				g.tm = g.tm.translate(-x.num/1000*g.tfs*g.th, 0)
			}
		}
	case "Do":
		if len(args) != 1 || args[0].kind != opName || depth >= maxFormDepth {
			return
		}
		xo := res.Key("XObject").Key(args[0].str)
		if xo.Key("Subtype").Name() != "Form" {
			return
		}
		m := identity
		if mv := xo.Key("Matrix"); mv.Len() == 6 {
			for i := range 6 {
				m[i] = mv.Index(i).Float64()
			}
		}
		formRes := xo.Key("Resources")
		if formRes.IsNull() {
			formRes = res
		}
		outer := in.budget.stream // the form is a stream of its own
		in.run(xo, formRes, m.mul(g.ctm), depth+1)
		in.budget.stream = outer
	}
}

// show places the glyphs of one string.
func (in *interpreter) show(g *textState, raw string) {
	f := g.font
	if f == nil || f.enc == nil || raw == "" || in.err != nil {
		return
	}
	// The glyph loop only moves tm's origin, so the rendering matrix's
	// linear part is computed once and each origin with two dot products.
	m := g.tm.mul(g.ctm)
	size := g.tfs * math.Hypot(m[2], m[3])
	xscale := math.Hypot(m[0], m[1])
	dir := direction(m)
	scale := g.tfs / 1000 * g.th
	emit := func(s string, w0 float64, space bool) {
		tx, ty := g.tm[4]+g.tm[2]*g.ts, g.tm[5]+g.tm[3]*g.ts
		x := tx*g.ctm[0] + ty*g.ctm[2] + g.ctm[4]
		y := tx*g.ctm[1] + ty*g.ctm[3] + g.ctm[5]
		x, y = dir.upright(x, y)
		if len(in.glyphs) >= in.limits.MaxPageGlyphs {
			in.err = &steperr.TooLargeError{Reason: fmt.Sprintf("a PDF page draws more than %d characters", in.limits.MaxPageGlyphs)}
			return
		}
		in.glyphs = append(in.glyphs, glyph{
			x: x, y: y, w: w0 * scale * xscale, size: size, s: unligature(s), dir: dir,
			space: s == " " || s == "\u00a0",
		})
		adv := (w0/1000*g.tfs + g.tc) * g.th
		if space {
			adv += g.tw * g.th
		}
		g.tm[4] += adv * g.tm[0]
		g.tm[5] += adv * g.tm[1]
	}
	if f.byteText != nil {
		for i := 0; i < len(raw); i++ {
			emit(f.byteText[raw[i]], f.width(int(raw[i])), raw[i] == ' ')
		}
		return
	}
	text := f.enc.Decode(raw)
	if f.composite {
		if f.twoByte {
			for i := 0; i+1 < len(raw); i += 2 {
				if s := f.enc.Decode(raw[i : i+2]); s != "" {
					emit(s, f.cidWidth(int(raw[i])<<8|int(raw[i+1])), false)
				}
			}
			return
		}
		// Multi-byte codes of unknown length: one estimated advance per
		// character.
		for _, r := range text {
			emit(string(r), estWidth*1000, false)
		}
		return
	}
	if utf8.RuneCountInString(text) == len(raw) {
		i := 0
		for j, r := range text {
			emit(text[j:j+utf8.RuneLen(r)], f.width(int(raw[i])), raw[i] == ' ')
			i++
		}
		return
	}
	// Codes that decode to several characters (ligatures) or none.
	for i := 0; i < len(raw); i++ {
		if s := f.enc.Decode(raw[i : i+1]); s != "" {
			emit(s, f.width(int(raw[i])), raw[i] == ' ')
		}
	}
}

// orientation is the direction of a text line in quarter turns
// counter-clockwise: 0 upright, 1 reading upwards, 2 upside down, 3
// reading downwards (rotated pages and landscape printouts).
type orientation uint8

func direction(m affine) orientation {
	dx, dy := m[0], m[1]
	switch {
	case math.Abs(dx) >= math.Abs(dy) && dx >= 0:
		return 0
	case math.Abs(dx) >= math.Abs(dy):
		return 2
	case dy > 0:
		return 1
	}
	return 3
}

// upright turns page coordinates into the frame where text of this
// orientation reads left to right, top to bottom.
func (o orientation) upright(x, y float64) (float64, float64) {
	switch o {
	case 1:
		return y, -x
	case 2:
		return -x, -y
	case 3:
		return -y, x
	}
	return x, y
}
