package analyze

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// The scanner makes one pass over a segment's text. It splits sentences,
// cuts words, counts terms, and recognises the structured entities (URLs,
// emails, dates, amounts) where they start, so that their dots and digits
// neither end sentences nor become words.

type tokFlag uint16

const (
	fCap       tokFlag = 1 << iota // first letter upper-case
	fUpper                         // two or more letters, all upper-case
	fLower                         // has a lower-case letter
	fDigit                         // has a digit
	fLetter                        // has a letter
	fSentStart                     // first word of its sentence
	fJoin                          // only white space since the previous word
	fAmp                           // only " & " since the previous word
)

type token struct {
	start, end int32
	sent       int32
	term       int32 // index into scanner.terms, -1 for numbers
	flags      tokFlag
}

// term is one distinct lower-case word of the segment.
type term struct {
	key         string
	count       int32
	lastSent    int32 // last sentence scored, to count a term once per sentence
	stop        uint8 // languages it is a function word of
	feat        uint8 // languages its spelling hints at
	lowerSeen   bool  // written in lower case somewhere
	midCap      bool  // capitalised somewhere other than at a sentence start
	noKey       bool  // never a keyword: too short or a contraction
	contraction bool
}

type sentence struct {
	start, end     int32
	tokFrom, tokTo int32
	letterToks     int32
}

type gapState uint8

const (
	gapPlain gapState = iota
	gapAmp
	gapBroken
)

// span is a URL or email found before the main pass.
type span struct {
	start, end int
	typ, value string
}

type entKey struct{ typ, value string }

// numericDate is an all-numeric date whose field order is decided once the
// language is known.
type numericDate struct {
	a, b, year int
	raw        string
}

type scanner struct {
	text    string
	toks    []token
	sents   []sentence
	terms   []term
	termIDs map[string]int32
	ents    map[entKey]int32
	dates   []numericDate
	spans   []span

	idBuf     []int32
	weightBuf []float64
	lowerBuf  []byte

	// sentence and word-gap state during the pass
	sentStart, sentTokFrom int
	sentContent            bool
	sentLetters            int32
	atSentStart            bool
	gap                    gapState
	lineStart              int
}

var scannerPool = sync.Pool{New: func() any {
	return &scanner{termIDs: map[string]int32{}, ents: map[entKey]int32{}}
}}

func getScanner() *scanner { return scannerPool.Get().(*scanner) }

// putScanner drops every reference into the analysed text, and keeps only
// scanners sized for ordinary pages so that one huge input does not pin
// memory in the pool.
func putScanner(s *scanner) {
	if cap(s.toks) > 1<<16 || len(s.termIDs) > 1<<14 {
		return
	}
	s.text = ""
	clear(s.terms)
	clear(s.spans)
	clear(s.dates)
	clear(s.termIDs)
	clear(s.ents)
	s.toks, s.sents, s.terms, s.spans, s.dates = s.toks[:0], s.sents[:0], s.terms[:0], s.spans[:0], s.dates[:0]
	scannerPool.Put(s)
}

// ASCII character classes for the hot loops.
const (
	clsOther uint8 = iota
	clsSpace
	clsLetter
	clsDigit
)

var asciiClass = func() (c [utf8.RuneSelf]uint8) {
	for b := range c {
		switch {
		case b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\f' || b == '\v':
			c[b] = clsSpace
		case b|0x20 >= 'a' && b|0x20 <= 'z':
			c[b] = clsLetter
		case b >= '0' && b <= '9':
			c[b] = clsDigit
		}
	}
	return c
}()

func isSpace(r rune) bool {
	if r < utf8.RuneSelf {
		return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' || r == '\v'
	}
	return unicode.IsSpace(r)
}

func isLetter(r rune) bool {
	if r < utf8.RuneSelf {
		return r|0x20 >= 'a' && r|0x20 <= 'z'
	}
	return unicode.IsLetter(r)
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

func isAlnum(r rune) bool {
	if r < utf8.RuneSelf {
		return isLetter(r) || isDigit(r)
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

func runeAt(t string, i, limit int) (rune, int) {
	if i >= limit {
		return -1, 0
	}
	if c := t[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(t[i:limit])
}

func (s *scanner) scan(text string) {
	s.text = text
	s.findSpans()
	s.sentStart, s.sentTokFrom, s.sentContent, s.sentLetters = 0, 0, false, 0
	s.atSentStart, s.gap, s.lineStart = true, gapBroken, 0
	n := len(text)
	si := 0
	for i := 0; i < n; {
		if si < len(s.spans) && i >= s.spans[si].start {
			sp := s.spans[si]
			si++
			s.addEntity(sp.typ, sp.value)
			i = max(i, sp.end)
			continue
		}
		limit := n
		if si < len(s.spans) {
			limit = s.spans[si].start
		}
		r, size := runeAt(text, i, limit)
		switch {
		case isDigit(r):
			i = s.number(i, limit)
		case isLetter(r):
			i = s.word(i, limit, true)
		case r == '\n':
			i = s.newline(i, limit)
		case r == ' ' || r == '\t' || r == '\r':
			i += size
		case r == '.' || r == '!' || r == '?' || r == '…':
			i = s.punct(i, limit)
		case r == '&':
			if s.gap == gapPlain && i+1 < limit && text[i+1] == ' ' {
				s.gap = gapAmp
			} else {
				s.gap = gapBroken
			}
			i += size
		case r == '\f' || r == '\v' || r == '\u2028' || r == '\u2029' || r == '\u0085':
			s.closeSentence(i)
			i += size
		default:
			if code, ok := currencySymbols[r]; ok {
				if end, ok := s.amountAfterCode(i+size, limit, code); ok {
					i = end
					continue
				}
			}
			if !unicode.IsSpace(r) {
				s.gap = gapBroken
			}
			i += size
		}
	}
	s.closeSentence(n)
}

// closeSentence ends the current sentence at end.
func (s *scanner) closeSentence(end int) {
	if s.sentContent {
		s.sents = append(s.sents, sentence{
			start: int32(s.sentStart), end: int32(end),
			tokFrom: int32(s.sentTokFrom), tokTo: int32(len(s.toks)),
			letterToks: s.sentLetters,
		})
	}
	s.sentStart, s.sentTokFrom, s.sentContent, s.sentLetters = end, len(s.toks), false, 0
	s.atSentStart, s.gap = true, gapBroken
}

// abbreviations whose dot does not end a sentence.
var abbreviations = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`mr mrs ms dr prof sr sra jr st inc ltd co corp vs etc eg ie approx no nr nos
fig figs vol pp p ca cf resp bzw usw ggf evtl inkl zzgl ua vgl hr fr frl str mme mlle m av art abs sig dott ing
dhr mevr blz jan feb mar apr jun jul aug sep sept oct okt nov dec dez`) {
		m[w] = true
	}
	return m
})

// punct handles . ! ? and the ellipsis at i.
func (s *scanner) punct(i, limit int) int {
	t := s.text
	j := i
	for j < limit {
		r, size := runeAt(t, j, limit)
		if r != '.' && r != '!' && r != '?' && r != '…' {
			break
		}
		j += size
	}
	single := j == i+1 && t[i] == '.'
	// closing quotes and brackets belong to the sentence they end
	for j < limit {
		r, size := runeAt(t, j, limit)
		if !strings.ContainsRune(`"')]”’»`, r) {
			break
		}
		j += size
	}
	s.gap = gapBroken
	next, _ := runeAt(t, j, limit)
	if j < limit && !isSpace(next) {
		return j
	}
	if single && s.dotContinues(i, j, limit) {
		return j
	}
	s.closeSentence(j)
	return j
}

// dotContinues reports whether a single dot at i is part of an
// abbreviation, an initial or a list number rather than a sentence end.
func (s *scanner) dotContinues(i, j, limit int) bool {
	if n := len(s.toks); n > 0 && int(s.toks[n-1].end) == i {
		tk := s.toks[n-1]
		w := s.text[tk.start:tk.end]
		if utf8.RuneCountInString(w) == 1 && tk.flags&fLetter != 0 {
			return true // an initial: "J. Smith", "z.B."
		}
		if tk.term >= 0 && abbreviations()[s.terms[tk.term].key] {
			return true
		}
		if tk.flags&fLetter == 0 && len(w) <= 2 && len(s.toks)-1 == s.sentTokFrom {
			return true // "1. Scope" list numbering
		}
	}
	// a lower-case continuation means the dot was not a full stop
	k := j
	for k < limit {
		r, size := runeAt(s.text, k, limit)
		if !isSpace(r) {
			return unicode.IsLower(r)
		}
		k += size
	}
	return false
}

// newline ends a sentence at a blank line, or after a short line without
// final punctuation: a heading, a list item or a table row. Long lines are
// wrapped prose and continue.
func (s *scanner) newline(i, limit int) int {
	t := s.text
	j, lines := i, 0
	for j < limit {
		switch t[j] {
		case '\n':
			lines++
		case ' ', '\t', '\r':
		default:
			goto done
		}
		j++
	}
done:
	lineLen := i - s.lineStart
	s.lineStart = j
	if lines >= 2 || lineLen < 40 || startsBullet(t, j, limit) {
		s.closeSentence(i)
	}
	return j
}

func startsBullet(t string, j, limit int) bool {
	r, size := runeAt(t, j, limit)
	switch r {
	case '•', '·', '▪', '◦', '‣', '-', '*', '–':
		nr, _ := runeAt(t, j+size, limit)
		return nr == ' ' || nr == '\t'
	}
	return false
}

// number handles a digit at i: a date, an amount, or a plain number.
func (s *scanner) number(i, limit int) int {
	if end, ok := s.dateDigitFirst(i, limit); ok {
		return end
	}
	if end, ok := s.amountNumberFirst(i, limit); ok {
		return end
	}
	return s.word(i, limit, false)
}

// Elided articles and prepositions in front of an apostrophe (l'Europe,
// dell'anno) are not part of the word.
var elisions = map[string]bool{
	"l": true, "d": true, "j": true, "m": true, "n": true, "s": true, "t": true, "c": true, "qu": true,
	"jusqu": true, "lorsqu": true, "puisqu": true, "dell": true, "nell": true, "all": true,
	"dall": true, "sull": true, "un": true, "quell": true, "dov": true,
}

func isApostrophe(r rune) bool { return r == '\'' || r == '’' }

// word reads the word at i; special reports whether it may be a month or a
// currency code that starts a date or an amount.
func (s *scanner) word(i, limit int, special bool) int {
	t := s.text
	j := i
	firstApos, lastApos, lastAposSize := -1, -1, 0
	first := true
loop:
	for j < limit {
		if c := t[j]; c < utf8.RuneSelf && asciiClass[c] >= clsLetter {
			j++
			first = false
			continue
		}
		r, size := runeAt(t, j, limit)
		switch {
		case isLetter(r) || isDigit(r):
		case !first && r >= utf8.RuneSelf && (unicode.IsMark(r) || unicode.IsDigit(r)):
		case !first && (r == '-' || r == '‐' || isApostrophe(r)):
			nr, _ := runeAt(t, j+size, limit)
			if !isAlnum(nr) {
				break loop
			}
			if isApostrophe(r) {
				if firstApos < 0 {
					firstApos = j
				}
				lastApos, lastAposSize = j, size
			}
		default:
			break loop
		}
		first = false
		j += size
	}
	end := j
	cs, ce := i, j
	contraction := false
	if firstApos >= 0 {
		if elisions[strings.ToLower(t[i:firstApos])] {
			_, size := runeAt(t, firstApos, limit)
			cs = firstApos + size
		}
		if lastApos >= cs {
			switch strings.ToLower(t[lastApos+lastAposSize : ce]) {
			case "s":
				ce = lastApos
			case "t", "re", "ve", "ll", "d", "m":
				contraction = true
			}
		}
	}
	if special && ce-cs <= 12 {
		if m, ok := monthOf(t[cs:ce]); ok && ce-cs >= 3 {
			if e, ok := s.dateMonthFirst(m, ce, limit); ok {
				return e
			}
		}
		if code, ok := currencyCode(t, cs, ce, limit); ok && (ce-cs == 3 || t[ce] == '$') {
			after := ce
			if after < limit && t[after] == '$' {
				after++
			}
			if e, ok := s.amountAfterCode(after, limit, code); ok {
				return e
			}
		}
	}
	s.addToken(cs, ce, contraction)
	return end
}

func (s *scanner) addToken(cs, ce int, contraction bool) {
	w := s.text[cs:ce]
	var flags tokFlag
	letters, uppers := 0, 0
	ascii, first := true, true
	for k := 0; k < len(w); {
		c := w[k]
		if c < utf8.RuneSelf {
			switch {
			case 'a' <= c && c <= 'z':
				letters++
				flags |= fLower
			case 'A' <= c && c <= 'Z':
				letters++
				uppers++
				if first {
					flags |= fCap
				}
			case '0' <= c && c <= '9':
				flags |= fDigit
			}
			k++
			first = false
			continue
		}
		ascii = false
		r, size := utf8.DecodeRuneInString(w[k:])
		k += size
		switch {
		case unicode.IsLetter(r):
			letters++
			if unicode.IsUpper(r) || unicode.IsTitle(r) {
				uppers++
				if first {
					flags |= fCap
				}
			} else if unicode.IsLower(r) {
				flags |= fLower
			}
		case unicode.IsDigit(r):
			flags |= fDigit
		}
		first = false
	}
	if letters > 0 {
		flags |= fLetter
	}
	if letters >= 2 && uppers == letters {
		flags |= fUpper
	}
	if s.atSentStart {
		// a leading number is a list marker: the word after it starts the sentence
		if letters > 0 {
			flags |= fSentStart
			s.atSentStart = false
		}
	} else if s.sentTokFrom < len(s.toks) {
		switch s.gap {
		case gapPlain:
			flags |= fJoin
		case gapAmp:
			flags |= fAmp
		}
	}
	s.gap = gapPlain
	s.sentContent = true
	if letters > 0 {
		s.sentLetters++
	}
	id := int32(-1)
	if letters > 0 && flags&fDigit == 0 && len(w) <= 64 {
		id = s.termID(w, ascii, uppers > 0)
		tm := &s.terms[id]
		tm.count++
		if flags&fCap == 0 {
			tm.lowerSeen = true
		} else if flags&fSentStart == 0 {
			tm.midCap = true
		}
		if contraction {
			tm.noKey, tm.contraction = true, true
		}
	}
	s.toks = append(s.toks, token{start: int32(cs), end: int32(ce), sent: int32(len(s.sents)), term: id, flags: flags})
}

// termID returns the id of w's lower-case form, adding it on first sight.
func (s *scanner) termID(w string, ascii, hasUpper bool) int32 {
	if ascii && !hasUpper {
		if id, ok := s.termIDs[w]; ok {
			return id
		}
		return s.newTerm(w)
	}
	if ascii {
		b := s.lowerBuf[:0]
		for k := 0; k < len(w); k++ {
			c := w[k]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			b = append(b, c)
		}
		s.lowerBuf = b
		if id, ok := s.termIDs[string(b)]; ok {
			return id
		}
		return s.newTerm(string(b))
	}
	key := strings.ToLower(w)
	if strings.ContainsRune(key, '’') {
		key = strings.ReplaceAll(key, "’", "'")
	}
	if id, ok := s.termIDs[key]; ok {
		return id
	}
	return s.newTerm(key)
}

func (s *scanner) newTerm(key string) int32 {
	id := int32(len(s.terms))
	s.termIDs[key] = id
	s.terms = append(s.terms, term{
		key: key, lastSent: -1, stop: stopwords()[key], feat: featureMask(key),
		noKey: utf8.RuneCountInString(key) < 3,
	})
	return id
}

func (s *scanner) addEntity(typ, value string) {
	s.ents[entKey{typ, value}]++
	s.markEntity()
}

// markEntity updates the sentence state for an entity just read: it is
// content, and it separates the words around it.
func (s *scanner) markEntity() {
	s.sentContent = true
	s.gap = gapBroken
	s.atSentStart = false
}
