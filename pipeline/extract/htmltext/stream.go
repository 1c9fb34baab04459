package htmltext

import (
	"bytes"
	"context"
	"io"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// builder is the streaming path. It reads the page with x/net/html's
// tokenizer and keeps a stack of open elements (atoms and flags, not
// nodes), from which it hands the walker element starts, ends and text in
// the order a walk of the parse tree would. It models the repairs that
// decide where text lands: implied html, head and body; a <p> closed by a
// block, <li> by <li>, <dt> and <dd> by each other, <option> by <option>;
// table parts closed and implied by table structure; end tags closing
// what is open inside their element, stray ones ignored; void, raw-text
// and foreign (SVG, MathML) elements; <template>; the form element
// pointer. Entries know their table context, and scans stop scanDepth
// entries down, so no step grows with the depth of the page. A first
// pass without a walker finds whether there is a main landmark or an
// article outside dropped elements; the second extracts.
//
// Known differences from the tree parser, all where it restructures the
// tree rather than closes elements:
//
//   - Formatting elements (<b>, <a>, <font>...) closed across a block, or
//     left open where a block starts or ends, are neither moved out of
//     the block nor reopened in the next (adoption agency, reconstruction
//     of active formatting elements). The text is the same unless a
//     hidden element or a landmark is among those moved, or is closed by
//     the end tag of a reopened copy, or the element is a mailto link,
//     whose address the tree repeats once per copy.
//   - Content that may not stand in a table is moved in front of it by the
//     parser (foster parenting); here only until the table has content of
//     its own, after which such content stays in the table.
//   - <frameset> is ignored (the parser drops the body for it), and the
//     attributes of a second <html> or <body> tag are not merged into the
//     element, whose start the walker has had.
//   - Quirks mode, in which a table does not close an open <p>, is told
//     from the doctype by its name and the common legacy public ids only.
type builder struct {
	ctx       context.Context
	z         *html.Tokenizer
	w         *walker // nil in the first pass
	roots     found   // which elements hold the main text
	found     found
	stack     []entry
	tag       tag
	name      []byte // the current tag's name, lower case
	quirks    bool   // no standards doctype: a table does not close a <p>
	body      bool   // the body has started
	form      bool   // the parser's form element pointer is set
	templates int
	tokens    int
}

// scanDepth bounds scans of the stack at the depth where the tree parser
// gives up, so that pathological nesting stays linear.
const scanDepth = 512

type entry struct {
	a     atom.Atom
	hash  uint32 // of the name, for elements without an atom
	ctx   int32  // index of the innermost table part, cell or template (or html)
	ns    uint8
	flags uint16
}

const (
	nsHTML uint8 = iota
	nsSVG
	nsMath
)

const (
	fDropped uint16 = 1 << iota // it or an ancestor is dropped: no main text inside
	fRoot                       // it or an ancestor holds the main text
	fTop                        // it is a root: the walker ends the block after it
	fSent                       // the walker has its start
	fLive                       // the walker wants its content
	fPending                    // a table part whose start waits (see flush)
	fIP                         // a foreign element whose content is HTML
	fSpecial                    // stops the scans of closeUntil
	fFresh                      // a pre or listing with nothing in it yet
	fGone                       // a form the parser took off the stack, children still open
)

// tag is the current start or end tag.
type tag struct {
	a        atom.Atom
	k        uint16 // kinds[a]
	hash     uint32
	self     bool
	e        elem
	hidden   bool // type=hidden
	breakout bool // <font> with color, face or size, which leaves foreign content
}

// Kinds of HTML elements, as the parser treats them.
const (
	kSpecial     uint16 = 1 << iota
	kClosesP            // its start tag closes an open <p>
	kVoid               // no content, no end tag
	kBreakout           // its start tag ends SVG or MathML content
	kBlock              // its end tag closes it (and what is open in it) if in scope
	kIgnored            // its start tag is ignored in the body
	kHead               // head content
	kImplied            // its end tag may be left out
	kScope              // bounds the default scope
	kTableScope         // bounds every scope
	kListScope          // bounds the list item scope
	kButtonScope        // bounds the button scope
	kPart               // a table part
)

// Scopes, as the kinds of the elements that bound them.
const (
	scopeTable   = kTableScope
	scopeDefault = kTableScope | kScope
	scopeList    = scopeDefault | kListScope
	scopeButton  = scopeDefault | kButtonScope
)

var kinds = map[atom.Atom]uint16{}

func init() {
	for k, names := range map[uint16]string{
		kSpecial: "address applet article aside blockquote body button caption center colgroup dd details dir div dl dt " +
			"fieldset figcaption figure footer form frameset h1 h2 h3 h4 h5 h6 head header hgroup html iframe li listing " +
			"main marquee menu nav noembed noframes noscript object ol p plaintext pre script section select style " +
			"summary table tbody td template textarea tfoot th thead title tr ul xmp",
		kClosesP: "address article aside blockquote center details dialog dir div dl fieldset figcaption figure footer " +
			"header hgroup main menu nav ol p search section summary ul pre listing plaintext xmp h1 h2 h3 h4 h5 h6 " +
			"li dd dt form hr",
		kVoid: "area br embed img keygen wbr input param source track hr base basefont bgsound link meta col",
		kBreakout: "b big blockquote body br center code dd div dl dt em embed h1 h2 h3 h4 h5 h6 head hr i img li " +
			"listing menu meta nobr ol p pre ruby s small span strong strike sub sup table tt u ul var",
		kBlock: "address article aside blockquote button center details dialog dir div dl fieldset figcaption figure " +
			"footer header hgroup listing main menu nav ol pre search section select summary ul applet marquee object " +
			"dd dt h1 h2 h3 h4 h5 h6",
		kIgnored:     "html body frameset frame head caption col colgroup tbody td tfoot th thead tr",
		kHead:        "base basefont bgsound link meta noframes noscript script style template title",
		kImplied:     "dd dt li optgroup option p rb rp rt rtc",
		kScope:       "applet caption td th marquee object select",
		kTableScope:  "html table template",
		kListScope:   "ol ul",
		kButtonScope: "button",
		kPart:        "caption colgroup col tbody thead tfoot tr td th",
	} {
		for _, n := range strings.Fields(names) {
			kinds[atom.Lookup([]byte(n))] |= k
		}
	}
}

// found is what the first pass learns of the page.
type found struct{ main, article bool }

// root reports whether e holds main text, given what the page has.
func (f found) root(e *elem) bool {
	switch {
	case f.main:
		return e.isMain()
	case f.article:
		return e.a == atom.Article
	}
	return e.a == atom.Body
}

func newBuilder(ctx context.Context, r io.Reader, w *walker) *builder {
	return &builder{ctx: ctx, z: html.NewTokenizer(r), w: w, quirks: true}
}

func (b *builder) run() error {
	for {
		tt := b.z.Next()
		if b.tokens++; b.tokens%4096 == 0 {
			if err := b.ctx.Err(); err != nil {
				return err
			}
		}
		switch tt {
		case html.ErrorToken:
			if err := b.z.Err(); err != io.EOF {
				return err
			}
			b.popTo(0)
			return nil
		case html.TextToken:
			b.text(b.z.Text())
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			end := tt == html.EndTagToken
			b.readTag(tt == html.SelfClosingTagToken)
			switch {
			case b.inHead() && b.beforeBody(end):
			case end:
				b.end()
			default:
				b.start()
			}
		case html.DoctypeToken:
			if len(b.stack) == 0 {
				b.quirks = quirky(strings.ToLower(string(b.z.Text())))
			}
		}
		b.z.AllowCDATA(len(b.stack) > 0 && b.top().ns != nsHTML)
	}
}

// readTag reads the tag's name and the attributes anything here looks at.
// The name is taken from the raw tag: TagName copies every one.
func (b *builder) readTag(self bool) {
	b.name = b.name[:0]
	for _, c := range bytes.TrimLeft(b.z.Raw(), "</") {
		if c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' || c == '/' || c == '>' {
			break
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b.name = append(b.name, c)
	}
	t := &b.tag
	*t = tag{a: atom.Lookup(b.name), self: self}
	t.k, t.e.a = kinds[t.a], t.a
	for i := 0; t.a == 0 && i < len(b.name); i++ { // FNV-1a, to match unknown elements
		t.hash = (t.hash ^ uint32(b.name[i])) * 16777619
	}
	for more := true; more; {
		var k, v []byte
		if k, v, more = b.z.TagAttr(); k == nil {
			break
		}
		switch key := string(k); key {
		case "hidden", "aria-hidden", "role":
			t.e.attr(key, string(v))
		case "href": // only a mailto address matters
			if t.a == atom.A && len(v) > 7 && bytes.EqualFold(v[:7], []byte("mailto:")) {
				t.e.attr(key, string(v))
			}
		case "type":
			t.hidden = bytes.EqualFold(v, []byte("hidden"))
		case "color", "face", "size":
			t.breakout = true
		}
	}
}

func (b *builder) top() *entry { return &b.stack[len(b.stack)-1] }

// push opens an element in the current one and tells the walker.
func (b *builder) push(a atom.Atom, e *elem, ns uint8) {
	n := entry{a: a, ns: ns}
	if a == 0 {
		n.hash = b.tag.hash
	}
	var pf uint16
	if len(b.stack) > 0 {
		p := b.top()
		p.flags &^= fFresh
		pf, n.ctx = p.flags, p.ctx
	}
	n.flags = pf & (fDropped | fRoot)
	if e.dropped() {
		n.flags |= fDropped
	}
	k := kinds[a]
	switch {
	case ns == nsSVG && (a == atom.Foreignobject || a == atom.Desc || a == atom.Title),
		ns == nsMath && (a == atom.Mi || a == atom.Mo || a == atom.Mn || a == atom.Ms || a == atom.Mtext):
		n.flags |= fIP | fSpecial
	case ns == nsHTML && k&kSpecial != 0:
		n.flags |= fSpecial
		if a == atom.Pre || a == atom.Listing {
			n.flags |= fFresh
		}
		if a == atom.Template {
			b.templates++
		}
		if k&kPart != 0 || a == atom.Table || a == atom.Template {
			n.ctx = int32(len(b.stack))
		}
	}
	if n.flags&fDropped == 0 {
		b.found.main = b.found.main || e.isMain()
		b.found.article = b.found.article || a == atom.Article
		if pf&fRoot == 0 && b.roots.root(e) {
			n.flags |= fRoot | fTop
		}
	}
	i := len(b.stack)
	b.stack = append(b.stack, n)
	if b.w == nil || pf&fLive == 0 && n.flags&fTop == 0 {
		return
	}
	plain := *e == (elem{a: a})
	switch {
	case pf&fPending != 0 && plain && k&kPart != 0 && a != atom.Caption && a != atom.Td && a != atom.Th,
		pf&fPending == 0 && plain && a == atom.Table && n.flags&fTop == 0:
		b.stack[i].flags |= fPending | fLive
		return
	case pf&fPending != 0 && k&kPart != 0:
		b.flush(i - 1)
	} // anything else in a pending table is moved out in front of it, or dropped
	b.send(i, e)
}

func (b *builder) send(i int, e *elem) {
	b.stack[i].flags |= fSent
	if b.w.open(e) {
		b.stack[i].flags |= fLive
	}
}

// flush gives the walker the starts of the pending table parts up to i. A
// table's start waits for its first content (a cell, a caption, text that
// stays in it), so that what the parser moves out in front of the table
// until then reaches the walker first, as in the tree.
func (b *builder) flush(i int) {
	j := i
	for j > 0 && b.stack[j-1].flags&fPending != 0 {
		j--
	}
	for ; j <= i && b.stack[j].flags&fPending != 0; j++ {
		b.stack[j].flags &^= fPending
		b.send(j, &elem{a: b.stack[j].a})
	}
}

// popTo closes elements until n are open, then a removed form whose
// children have all closed.
func (b *builder) popTo(n int) {
	for len(b.stack) > 0 && (len(b.stack) > n || b.top().flags&fGone != 0) {
		e := b.top()
		if e.flags&fPending != 0 && e.a == atom.Table {
			b.flush(len(b.stack) - 1)
		} // an empty part at the start of a table changes no text
		if e.flags&fSent != 0 {
			b.w.close()
			if e.flags&fTop != 0 {
				b.w.endBlock()
			}
		}
		if e.a == atom.Template && e.ns == nsHTML {
			b.templates--
		}
		b.stack = b.stack[:len(b.stack)-1]
	}
}

func (b *builder) pop() { b.popTo(len(b.stack) - 1) }

// find returns the index of the innermost open element that match
// accepts, or -1 if stop accepts one first or none is within scanDepth.
func (b *builder) find(match, stop func(*entry) bool) int {
	for i := len(b.stack) - 1; i >= 0 && i >= len(b.stack)-scanDepth; i-- {
		if n := &b.stack[i]; n.flags&fGone == 0 {
			if match(n) {
				return i
			}
			if stop(n) {
				return -1
			}
		}
	}
	return -1
}

func (b *builder) popIf(i int) {
	if i >= 0 {
		b.popTo(i)
	}
}

func (b *builder) closeP() { b.popIf(b.inScope(scopeButton, atom.P)) }

// inScope returns the index of the innermost open a (any heading for a
// heading) within the scope bounded by elements of the kinds stop, or -1.
func (b *builder) inScope(stop uint16, a atom.Atom) int {
	return b.find(func(n *entry) bool {
		return n.ns == nsHTML && (n.a == a || isHeading(a) && isHeading(n.a))
	}, func(n *entry) bool {
		return n.ns == nsHTML && kinds[n.a]&stop != 0 || n.ns != nsHTML && stop&kScope != 0 && n.flags&fSpecial != 0
	})
}

// closeUntil closes the innermost open element matching a (and hash, for
// elements without an atom) and what is open inside it, unless a special
// element comes first. For list items (<li>, <dd>, <dt>) <address>, <div>
// and <p> do not stop the scan, and <dd> and <dt> close each other.
func (b *builder) closeUntil(a atom.Atom, hash uint32, item bool) {
	b.popIf(b.find(func(n *entry) bool {
		return n.a == a && n.hash == hash || item && a != atom.Li && (n.a == atom.Dd || n.a == atom.Dt)
	}, func(n *entry) bool {
		return n.flags&fSpecial != 0 && !(item && (n.a == atom.Address || n.a == atom.Div || n.a == atom.P))
	}))
}

// inHead reports whether the body has not started and the current
// element is the html or the head element.
func (b *builder) inHead() bool { return !b.body && b.templates == 0 && len(b.stack) <= 2 }

// beforeBody handles a tag before the body, in the html or head element,
// and reports whether it is done with it; head content, placed in the
// head, and the tags that open the body go on as in the body.
func (b *builder) beforeBody(end bool) bool {
	t := &b.tag
	if len(b.stack) == 0 {
		e := &elem{a: atom.Html}
		if !end && t.a == atom.Html {
			e = &t.e
		}
		b.push(atom.Html, e, nsHTML)
	}
	switch {
	case !end && (t.a == atom.Head || t.k&kHead != 0):
		if len(b.stack) == 1 { // also for head content after </head>
			b.push(atom.Head, &elem{a: atom.Head}, nsHTML)
		}
		return t.a == atom.Head
	case end && t.a == atom.Head && len(b.stack) == 2:
		b.pop()
	case !end && t.a != atom.Html, end && (t.a == atom.Body || t.a == atom.Html || t.a == atom.Br):
		explicit := !end && t.a == atom.Body
		e := &elem{a: atom.Body}
		if explicit {
			e = &t.e
		}
		b.startBody(e)
		return explicit
	}
	return true
}

// startBody closes the head and opens the body, which the parser implies
// before anything that cannot stand in the head.
func (b *builder) startBody(e *elem) {
	if len(b.stack) == 0 {
		b.push(atom.Html, &elem{a: atom.Html}, nsHTML)
	}
	b.popTo(1)
	b.body = true
	b.push(atom.Body, e, nsHTML)
}

func (b *builder) text(d []byte) {
	if bytes.IndexByte(d, 0) >= 0 {
		d = bytes.ReplaceAll(d, []byte{0}, nil)
	}
	space := true
	for i := 0; space && i < len(d); i++ {
		space = d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\f' || d[i] == '\r'
	}
	if b.inHead() {
		if space {
			return
		}
		b.startBody(&elem{a: atom.Body})
	}
	n := b.top()
	if n.flags&fFresh != 0 { // the parser drops a newline that starts a <pre>
		d = bytes.TrimPrefix(d, []byte{'\n'})
		n.flags &^= fFresh
	}
	// Other text right in a table the parser moves in front of it: the
	// walker has it before the table's start while that waits (flush).
	switch {
	case len(d) == 0, space && n.flags&fPending != 0: // blanks in a waiting table are no text
	case n.a == atom.Colgroup && n.ns == nsHTML && !space:
		b.pop()
		b.text(d)
	case b.w != nil && n.flags&fLive != 0:
		b.w.text(d)
	}
}

// mode is the table context that the parser's insertion mode follows,
// with the index of the element that sets it: Table, Tbody, Tr, Td,
// Caption, Colgroup, Template, or Html for the body.
func (b *builder) mode() (atom.Atom, int) {
	i := int(b.top().ctx)
	switch a := b.stack[i].a; a {
	case atom.Thead, atom.Tfoot:
		return atom.Tbody, i
	case atom.Th:
		return atom.Td, i
	default:
		return a, i
	}
}

// tableChild is the element a table context opens for the start tag a: a
// itself where it may stand, else the part implied around it.
func tableChild(m, a atom.Atom) atom.Atom {
	switch {
	case m == atom.Table && (a == atom.Caption || a == atom.Colgroup || a == atom.Tbody || a == atom.Thead || a == atom.Tfoot),
		m == atom.Tbody && a == atom.Tr, m == atom.Tr && (a == atom.Td || a == atom.Th), m == atom.Colgroup && a == atom.Col:
		return a
	case m == atom.Table && a == atom.Col:
		return atom.Colgroup
	case m == atom.Table && (a == atom.Td || a == atom.Th || a == atom.Tr):
		return atom.Tbody
	case m == atom.Tbody && (a == atom.Td || a == atom.Th):
		return atom.Tr
	}
	return 0
}

func (b *builder) start() {
	t := &b.tag
	if n := b.top(); n.ns != nsHTML && n.flags&fIP == 0 {
		if t.k&kBreakout == 0 && !(t.a == atom.Font && t.breakout) {
			b.push(t.a, &t.e, n.ns)
			b.z.NextIsNotRawText() // an SVG <title> or <style> holds markup
			if t.self {
				b.pop()
			}
			return
		}
		for ; n.ns != nsHTML && n.flags&fIP == 0; n = b.top() {
			b.pop()
		}
	}
	a := t.a
	if m, ctx := b.mode(); m != atom.Html && m != atom.Template {
		switch c := tableChild(m, a); {
		case c != 0 && c == a:
			b.popTo(ctx + 1)
			if b.push(a, &t.e, nsHTML); a == atom.Col {
				b.pop()
			}
			return
		case c != 0:
			b.popTo(ctx + 1)
			b.push(c, &elem{a: c}, nsHTML)
			b.start()
			return
		case m == atom.Colgroup && a != atom.Template || t.k&kPart != 0 || a == atom.Table && m != atom.Td && m != atom.Caption:
			b.popTo(ctx) // the part ends; the context around it decides
			b.start()
			return
		case m == atom.Td || m == atom.Caption:
		case a == atom.Input && t.hidden:
			b.push(a, &t.e, nsHTML)
			b.pop()
			return
		case a == atom.Form:
			if b.templates == 0 && !b.form {
				b.form = true
				b.push(a, &t.e, nsHTML)
				b.pop()
			}
			return
		} // anything else the parser moves out in front of the table
	}
	b.bodyStart()
}

// bodyStart handles a start tag in the body.
func (b *builder) bodyStart() {
	t := &b.tag
	if t.a == atom.Image { // renamed in HTML content only
		t.a, t.e.a, t.k = atom.Img, atom.Img, kinds[atom.Img]
	}
	a := t.a
	switch {
	case t.k&kIgnored != 0, a == atom.Form && b.form && b.templates == 0:
		return
	case a == atom.Li, a == atom.Dd, a == atom.Dt:
		b.closeUntil(a, 0, true)
	case a == atom.A, a == atom.Nobr: // a link in a link ends it
		b.closeUntil(a, 0, false)
	case a == atom.Button:
		b.popIf(b.inScope(scopeDefault, a))
	case a == atom.Select, a == atom.Input: // either ends an open select
		i := b.inScope(scopeDefault, atom.Select)
		if b.popIf(i); i >= 0 && a == atom.Select {
			return
		}
	case a == atom.Option, a == atom.Optgroup:
		if n := b.top(); n.a == atom.Option && n.ns == nsHTML {
			b.pop()
		}
	}
	if t.k&kClosesP != 0 || a == atom.Table && !b.quirks {
		b.closeP()
	}
	ns := nsHTML
	switch a {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		if n := b.top(); n.ns == nsHTML && isHeading(n.a) {
			b.pop()
		}
	case atom.Form:
		b.form = b.templates == 0
	case atom.Svg:
		ns = nsSVG
	case atom.Math:
		ns = nsMath
	}
	if b.push(a, &t.e, ns); t.k&kVoid != 0 || ns != nsHTML && t.self {
		b.pop()
	}
}

func (b *builder) end() {
	t := &b.tag
	a := t.a
	// In SVG or MathML, the innermost foreign element of that name, if any.
	if i := b.find(func(n *entry) bool { return n.ns != nsHTML && n.a == a && n.hash == t.hash },
		func(n *entry) bool { return n.ns == nsHTML }); i >= 0 {
		b.popTo(i)
		return
	}
	if a == atom.Br { // </br> is read as <br>
		t.self, t.e = false, elem{a: atom.Br}
		b.start()
		return
	}
	if m, ctx := b.mode(); m != atom.Html && m != atom.Template {
		switch own := b.stack[ctx].a; {
		case a == own:
			b.popTo(ctx)
			return
		case m == atom.Colgroup && a != atom.Col && a != atom.Template,
			m != atom.Colgroup && (a == atom.Table || a == atom.Tbody || a == atom.Thead || a == atom.Tfoot || a == atom.Tr) &&
				b.inScope(scopeTable, a) >= 0:
			b.popTo(ctx) // the part ends; the context around it decides
			b.end()
			return
		case t.k&kPart != 0 || a == atom.Body || a == atom.Html || a == atom.Table:
			return
		}
	}
	switch {
	case a == atom.Body || a == atom.Html: // what follows still goes into the body
	case t.k&kBlock != 0:
		b.popIf(b.inScope(scopeDefault, a))
	case a == atom.Li:
		b.popIf(b.inScope(scopeList, a))
	case a == atom.P:
		if b.inScope(scopeButton, a) < 0 { // an empty paragraph, opened as <p> would be
			*t = tag{a: a, k: t.k, e: elem{a: a}}
			b.start()
		}
		b.closeP()
	case a == atom.Template:
		b.popIf(b.find(func(n *entry) bool { return n.a == a && n.ns == nsHTML }, func(*entry) bool { return false }))
	case a == atom.Form && b.templates > 0:
		b.popIf(b.inScope(scopeDefault, a))
	case a == atom.Form:
		// The parser takes the form off the stack but leaves open what is
		// open inside it; the form ends with the last of those.
		if i := b.inScope(scopeDefault, a); b.form && i >= 0 {
			for n := b.top(); kinds[n.a]&kImplied != 0 && n.ns == nsHTML; n = b.top() {
				b.pop()
			}
			b.stack[i].flags |= fGone
			b.popTo(len(b.stack))
		}
		b.form = false
	default:
		b.closeUntil(a, t.hash, false)
	}
}

// quirky reports whether a doctype (in lower case) puts the page in
// quirks mode: not html, or the public id of an HTML before 4.01, or of
// 4.01 transitional or frameset without a system id.
func quirky(d string) bool {
	d = strings.TrimSpace(d)
	name, rest := d, ""
	if i := strings.IndexAny(d, " \t\n\f\r\"'"); i >= 0 {
		name, rest = d[:i], d[i:]
	}
	f := strings.FieldsFunc(rest, func(r rune) bool { return r == '"' || r == '\'' }) // keyword, id, space, id
	if name != "html" || len(f) < 2 {
		return name != "html"
	}
	for _, p := range []string{"-//w3c//dtd html 4.0 ", "-//w3c//dtd html 3", "-//w3c//dtd html 2", "-//ietf//dtd html"} {
		if strings.HasPrefix(f[1], p) {
			return true
		}
	}
	return len(f) < 4 && (strings.HasPrefix(f[1], "-//w3c//dtd html 4.01 transitional") || strings.HasPrefix(f[1], "-//w3c//dtd html 4.01 frameset"))
}
