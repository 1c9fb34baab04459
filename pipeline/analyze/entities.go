package analyze

import (
	"cmp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// ---- URLs and emails ----------------------------------------------------

// findSpans locates URLs and email addresses. They are found before the
// main pass because their dots, slashes and @ signs must not split words or
// sentences.
func (s *scanner) findSpans() {
	t := s.text
	for off := 0; off < len(t); {
		k := strings.Index(t[off:], "://")
		if k < 0 {
			break
		}
		p := off + k
		b := p
		for b > 0 && p-b < 5 && isASCIILetter(t[b-1]) {
			b--
		}
		scheme := strings.ToLower(t[b:p])
		off = p + 3
		if scheme != "http" && scheme != "https" && scheme != "ftp" || (b > 0 && isASCIIAlnum(t[b-1])) {
			continue
		}
		if e, host := urlEnd(t, p+3); validHost(host) {
			s.spans = append(s.spans, span{b, e, EntityURL, scheme + "://" + lowerHost(t[p+3:e], len(host))})
			off = e
		}
	}
	// next occurrence of "www." and "WWW." at or after off, cached so that
	// the scan stays linear
	nextLower, nextUpper := -1, -1
	find := func(next *int, pat string, off int) int {
		if *next < off && *next != len(t) {
			if k := strings.Index(t[off:], pat); k >= 0 {
				*next = off + k
			} else {
				*next = len(t)
			}
		}
		return *next
	}
	for off := 0; off < len(t); {
		p := min(find(&nextLower, "www.", off), find(&nextUpper, "WWW.", off))
		if p >= len(t) {
			break
		}
		off = p + 4
		if p > 0 && (isASCIIAlnum(t[p-1]) || strings.IndexByte("/.@-_", t[p-1]) >= 0) {
			continue
		}
		if e, host := urlEnd(t, p); validHost(host) && strings.Count(host, ".") >= 2 {
			s.spans = append(s.spans, span{p, e, EntityURL, lowerHost(t[p:e], len(host))})
			off = e
		}
	}
	for off := 0; off < len(t); {
		k := strings.IndexByte(t[off:], '@')
		if k < 0 {
			break
		}
		p := off + k
		off = p + 1
		b := p
		for b > 0 && p-b < 64 && isEmailLocal(t[b-1]) {
			b--
		}
		for b < p && t[b] == '.' {
			b++
		}
		e := p + 1
		for e < len(t) && e-p < 255 && (isASCIIAlnum(t[e]) || t[e] == '.' || t[e] == '-') {
			e++
		}
		for e > p+1 && (t[e-1] == '.' || t[e-1] == '-') {
			e--
		}
		if b == p || !validDomain(t[p+1:e]) {
			continue
		}
		s.spans = append(s.spans, span{b, e, EntityEmail, strings.ToLower(t[b:e])})
		off = e
	}
	if len(s.spans) < 2 {
		return
	}
	slices.SortFunc(s.spans, func(a, b span) int { return cmp.Compare(a.start, b.start) })
	// An address inside a URL (user@host) belongs to the URL.
	out := s.spans[:1]
	for _, sp := range s.spans[1:] {
		if sp.start >= out[len(out)-1].end {
			out = append(out, sp)
		}
	}
	s.spans = out
}

func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isASCIIAlnum(c byte) bool  { return isASCIILetter(c) || c >= '0' && c <= '9' }
func isEmailLocal(c byte) bool {
	return isASCIIAlnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-'
}

// urlEnd returns where a URL starting at from ends, and its host part.
func urlEnd(t string, from int) (int, string) {
	e := from
	for e < len(t) && e-from < 2048 {
		c := t[e]
		if c <= ' ' || c >= utf8.RuneSelf || strings.IndexByte("<>\"'`{}|\\^", c) >= 0 {
			break
		}
		e++
	}
	// Trailing punctuation ends the sentence, not the URL; a closing
	// bracket stays only when the URL opened one.
	for e > from {
		c := t[e-1]
		if strings.IndexByte(".,;:!?*", c) >= 0 ||
			c == ')' && strings.Count(t[from:e], "(") < strings.Count(t[from:e], ")") ||
			c == ']' && strings.Count(t[from:e], "[") < strings.Count(t[from:e], "]") {
			e--
			continue
		}
		break
	}
	h := from
	for h < e && strings.IndexByte("/?#", t[h]) < 0 {
		h++
	}
	return e, t[from:h]
}

func validHost(h string) bool {
	if i := strings.LastIndexByte(h, '@'); i >= 0 {
		h = h[i+1:]
	}
	if i := strings.IndexByte(h, ':'); i >= 0 {
		h = h[:i]
	}
	return h == "localhost" || validDomain(h)
}

// validDomain accepts dotted names whose last label is alphabetic.
func validDomain(d string) bool {
	dot := strings.LastIndexByte(d, '.')
	if dot <= 0 || len(d)-dot-1 < 2 || d[0] == '-' || strings.Contains(d, "..") {
		return false
	}
	for i := dot + 1; i < len(d); i++ {
		if !isASCIILetter(d[i]) {
			return false
		}
	}
	return true
}

// lowerHost lower-cases the first n bytes (the host) of u.
func lowerHost(u string, n int) string {
	return strings.ToLower(u[:n]) + u[n:]
}

// ---- dates ----------------------------------------------------------------

var months = sync.OnceValue(func() map[string]int {
	m := map[string]int{}
	add := func(n int, names string) {
		for _, w := range strings.Fields(names) {
			for _, v := range []string{w, strings.ToUpper(w[:1]) + w[1:], strings.ToUpper(w)} {
				m[v] = n
			}
		}
	}
	add(1, "january jan januar jänner janvier enero gennaio januari janeiro")
	add(2, "february feb februar février fevrier febrero febbraio februari fevereiro fev")
	add(3, "march mar märz mrz mars marzo maart março marco")
	add(4, "april apr avril abril aprile")
	add(5, "may mai mayo maggio mei maio")
	add(6, "june jun juni juin junio giugno junho")
	add(7, "july jul juli juillet julio luglio julho")
	add(8, "august aug août aout agosto augustus ago")
	add(9, "september sep sept septembre septiembre setiembre settembre setembro set")
	add(10, "october oct oktober okt octobre octubre ottobre oktober outubro out")
	add(11, "november nov novembre noviembre novembro")
	add(12, "december dec dezember dez décembre decembre diciembre dicembre dezembro")
	return m
})

// fullMonths are month names that are never a person's or company's name.
var fullMonths = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for w := range months() {
		if len(w) > 4 {
			m[strings.ToLower(w)] = true
		}
	}
	return m
})

func monthOf(w string) (int, bool) {
	m, ok := months()[w]
	return m, ok
}

// digitsAt reads up to maxN ASCII digits at i. It reports how many digits
// there were in total, so a longer run can be rejected.
func digitsAt(t string, i, limit, maxN int) (val, n, end int) {
	for end = i; end < limit && t[end] >= '0' && t[end] <= '9'; end++ {
		if n < maxN {
			val = val*10 + int(t[end]-'0')
		}
		n++
	}
	return val, n, end
}

// boundary reports whether position i ends a token: end of text or a
// character that is neither letter nor digit.
func boundary(t string, i, limit int) bool {
	r, _ := runeAt(t, i, limit)
	return r < 0 || !isAlnum(r)
}

func skipSpaces(t string, i, limit int) int {
	for i < limit {
		r, size := runeAt(t, i, limit)
		if r != ' ' && r != '\u00a0' && r != '\u202f' && r != '\t' {
			break
		}
		i += size
	}
	return i
}

// skipWord skips w (any case) followed by at least one space.
func skipWord(t string, i, limit int, words ...string) int {
	for _, w := range words {
		if i+len(w) < limit && strings.EqualFold(t[i:i+len(w)], w) {
			if j := skipSpaces(t, i+len(w), limit); j > i+len(w) {
				return j
			}
		}
	}
	return i
}

// monthWord reads a month name (optionally abbreviated with a dot) at i.
func monthWord(t string, i, limit int) (month, end int, ok bool) {
	e := i
	for e < limit {
		r, size := runeAt(t, e, limit)
		if !isLetter(r) {
			break
		}
		e += size
		if e-i > 12 {
			return 0, 0, false
		}
	}
	month, ok = months()[t[i:e]]
	if ok && e < limit && t[e] == '.' {
		e++
	}
	return month, e, ok
}

func daysIn(m, y int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

func validDate(y, m, d int) bool {
	return y >= 1000 && y <= 2999 && m >= 1 && m <= 12 && d >= 1 && d <= daysIn(m, y)
}

func isoDate(y, m, d int) string {
	b := []byte{
		byte('0' + y/1000), byte('0' + y/100%10), byte('0' + y/10%10), byte('0' + y%10), '-',
		byte('0' + m/10), byte('0' + m%10),
	}
	if d > 0 {
		b = append(b, '-', byte('0'+d/10), byte('0'+d%10))
	}
	return string(b)
}

// dateDigitFirst recognises 2024-03-05, 05/03/2024, 5.3.2024, 5 March 2024,
// 5. März 2024, 1er mars 2024 and 5 de marzo de 2024 at i.
func (s *scanner) dateDigitFirst(i, limit int) (int, bool) {
	t := s.text
	v1, n1, j := digitsAt(t, i, limit, 4)
	if n1 == 4 && j+1 < limit && (t[j] == '-' || t[j] == '/') {
		sep := t[j]
		m, n2, k := digitsAt(t, j+1, limit, 2)
		if n2 >= 1 && n2 <= 2 && k < limit && t[k] == sep {
			d, n3, e := digitsAt(t, k+1, limit, 2)
			if n3 >= 1 && n3 <= 2 && boundary(t, e, limit) && validDate(v1, m, d) {
				s.addEntity(EntityDate, isoDate(v1, m, d))
				return e, true
			}
		}
		return 0, false
	}
	if n1 < 1 || n1 > 2 || v1 < 1 || v1 > 31 {
		return 0, false
	}
	if j+1 < limit && (t[j] == '/' || t[j] == '.' || t[j] == '-') && isDigitAt(t, j+1, limit) {
		sep := t[j]
		v2, n2, k := digitsAt(t, j+1, limit, 2)
		if n2 < 1 || n2 > 2 || k >= limit || t[k] != sep {
			return 0, false
		}
		y, n3, e := digitsAt(t, k+1, limit, 4)
		if !(n3 == 4 || n3 == 2 && sep == '/') || !boundary(t, e, limit) || v2 < 1 || v2 > 31 || (v1 > 12 && v2 > 12) {
			return 0, false
		}
		if n3 == 2 {
			y += 2000
			if y >= 2070 {
				y -= 100
			}
		}
		if sep == '.' {
			// dotted numeric dates are day-first wherever they are written
			if !validDate(y, v2, v1) {
				return 0, false
			}
			s.addEntity(EntityDate, isoDate(y, v2, v1))
			return e, true
		}
		if !validDate(y, v2, v1) && !validDate(y, v1, v2) {
			return 0, false
		}
		s.dates = append(s.dates, numericDate{a: v1, b: v2, year: y, raw: t[i:e]})
		s.markEntity()
		return e, true
	}
	// textual month: 5 March 2024, 5th of March, 2024, 5. März 2024
	k := j
	if k < limit && t[k] == '.' {
		k++
	} else {
		for _, suf := range [...]string{"st", "nd", "rd", "th", "er", "º", "ª", "o"} {
			if strings.HasPrefix(t[k:limit], suf) && !isAlnumAt(t, k+len(suf), limit) {
				k += len(suf)
				break
			}
		}
	}
	sp := skipSpaces(t, k, limit)
	if sp == k {
		return 0, false
	}
	sp = skipWord(t, sp, limit, "de", "of")
	m, e, ok := monthWord(t, sp, limit)
	if !ok {
		return 0, false
	}
	if e < limit && t[e] == ',' {
		e++
	}
	ys := skipSpaces(t, e, limit)
	if ys == e {
		return 0, false
	}
	ys = skipWord(t, ys, limit, "de", "del")
	y, ny, ye := digitsAt(t, ys, limit, 4)
	if ny != 4 || !boundary(t, ye, limit) || !validDate(y, m, v1) {
		return 0, false
	}
	s.addEntity(EntityDate, isoDate(y, m, v1))
	return ye, true
}

func isAlnumAt(t string, i, limit int) bool {
	r, _ := runeAt(t, i, limit)
	return r >= 0 && isAlnum(r)
}

// dateMonthFirst recognises "March 5, 2024", "March 5th 2024" and
// "March 2024" (a month) after the month word that ends at i.
func (s *scanner) dateMonthFirst(m, i, limit int) (int, bool) {
	t := s.text
	k := i
	if k < limit && t[k] == '.' {
		k++
	}
	sp := skipSpaces(t, k, limit)
	if sp == k {
		return 0, false
	}
	sp = skipWord(t, sp, limit, "de", "del")
	v, n, e := digitsAt(t, sp, limit, 4)
	switch {
	case n == 4 && boundary(t, e, limit) && validDate(v, m, 1):
		s.addEntity(EntityDate, isoDate(v, m, 0))
		return e, true
	case n >= 1 && n <= 2:
		for _, suf := range [...]string{"st", "nd", "rd", "th"} {
			if strings.HasPrefix(t[e:limit], suf) {
				e += len(suf)
				break
			}
		}
		if e < limit && t[e] == ',' {
			e++
		}
		ys := skipSpaces(t, e, limit)
		if ys == e {
			return 0, false
		}
		y, ny, ye := digitsAt(t, ys, limit, 4)
		if ny == 4 && boundary(t, ye, limit) && validDate(y, m, v) {
			s.addEntity(EntityDate, isoDate(y, m, v))
			return ye, true
		}
	}
	return 0, false
}

// resolveDates decides the field order of all-numeric dates: a field over
// 12 settles it, otherwise the configured order or the language's habit.
// An English 05/03/2024 stays as written: it is March 5 in the US and
// 5 March in Britain.
func (s *scanner) resolveDates(lang int, order DateOrder) {
	for _, d := range s.dates {
		dmy, mdy := validDate(d.year, d.b, d.a), validDate(d.year, d.a, d.b)
		var v string
		switch {
		case d.a == d.b || dmy && !mdy:
			v = isoDate(d.year, d.b, d.a)
		case mdy && !dmy:
			v = isoDate(d.year, d.a, d.b)
		case order == DateOrderDMY || order == DateOrderAuto && lang > langEN:
			v = isoDate(d.year, d.b, d.a)
		case order == DateOrderMDY:
			v = isoDate(d.year, d.a, d.b)
		default:
			v = d.raw
		}
		s.ents[entKey{EntityDate, v}]++
	}
}

// ---- amounts --------------------------------------------------------------

var currencySymbols = map[rune]string{
	'$': "USD", '€': "EUR", '£': "GBP", '¥': "JPY", '₹': "INR", '₽': "RUB", '₩': "KRW",
	'₺': "TRY", '₪': "ILS", '฿': "THB", '₫': "VND", '₴': "UAH", '₦': "NGN", '₱': "PHP",
}

var currencyCodes = sync.OnceValue(func() map[string]string {
	m := map[string]string{}
	for _, c := range strings.Fields(`USD EUR GBP CHF JPY CNY CAD AUD NZD SEK NOK DKK PLN CZK HUF BRL MXN INR RUB
ZAR HKD SGD TRY KRW ILS AED SAR`) {
		m[c] = c
	}
	for w, c := range map[string]string{"euro": "EUR", "euros": "EUR", "dollar": "USD", "dollars": "USD", "dólares": "USD", "dollari": "USD"} {
		m[w], m[strings.ToUpper(w[:1])+w[1:]] = c, c
	}
	return m
})

// prefixed dollars: US$, R$, A$ ...
var dollarPrefixes = map[string]string{"US": "USD", "R": "BRL", "A": "AUD", "C": "CAD", "NZ": "NZD", "HK": "HKD", "S": "SGD"}

func currencyCode(t string, cs, ce, limit int) (string, bool) {
	w := t[cs:ce]
	if ce < limit && t[ce] == '$' {
		c, ok := dollarPrefixes[w]
		return c, ok
	}
	if len(w) == 3 {
		c, ok := currencyCodes()[w]
		return c, ok && c == w
	}
	return "", false
}

// amountAfterCode reads the number after a currency symbol or code at i.
func (s *scanner) amountAfterCode(i, limit int, code string) (int, bool) {
	t := s.text
	j := i
	if r, size := runeAt(t, j, limit); r == ' ' || r == '\u00a0' || r == '\u202f' {
		j += size
	}
	if j >= limit || t[j] < '0' || t[j] > '9' {
		return 0, false
	}
	num, e, ok := parseAmount(t, j, limit)
	if !ok {
		return 0, false
	}
	s.addEntity(EntityAmount, code+" "+num)
	return e, true
}

// amountNumberFirst recognises "12.50 €", "300 EUR" and "20 euros" at i.
func (s *scanner) amountNumberFirst(i, limit int) (int, bool) {
	t := s.text
	num, e, ok := parseAmount(t, i, limit)
	if !ok {
		return 0, false
	}
	j := e
	if r, size := runeAt(t, j, limit); r == ' ' || r == '\u00a0' || r == '\u202f' {
		j += size
	}
	r, size := runeAt(t, j, limit)
	if code, ok := currencySymbols[r]; ok {
		s.addEntity(EntityAmount, code+" "+num)
		return j + size, true
	}
	w := j
	for w < limit && w-j <= 8 {
		r, size := runeAt(t, w, limit)
		if !isLetter(r) {
			break
		}
		w += size
	}
	if code, ok := currencyCodes()[t[j:w]]; ok && boundary(t, w, limit) {
		s.addEntity(EntityAmount, code+" "+num)
		return w, true
	}
	return 0, false
}

// parseAmount reads a number with optional grouping and decimals at i and
// returns it with a dot as decimal separator and no grouping: "1,234.56",
// "1.234,56" and "1'234.56" all give "1234.56"; "12,50" gives "12.50";
// "1,234" and "1.234" give "1234" (a single separator before exactly three
// digits groups thousands).
func parseAmount(t string, i, limit int) (string, int, bool) {
	type group struct {
		start, end int
		sep        rune
	}
	var groups [8]group
	n := 0
	_, nd, j := digitsAt(t, i, limit, 18)
	groups[0] = group{i, j, 0}
	n++
	for n < len(groups) {
		r, size := runeAt(t, j, limit)
		if r != ',' && r != '.' && r != '\'' && r != ' ' && r != '\u00a0' && r != '\u202f' && r != '\u2009' && r != '’' {
			break
		}
		if !isDigitAt(t, j+size, limit) {
			break
		}
		_, k, e := digitsAt(t, j+size, limit, 18)
		if r == ' ' && k != 3 {
			break // a plain space groups thousands only before three digits
		}
		nd += k
		groups[n] = group{j + size, e, r}
		n++
		j = e
	}
	if nd > 18 || isDigitAt(t, j, limit) || n == len(groups) {
		return "", 0, false
	}
	// "300,-" and "300.–": whole amounts in German-speaking style
	if j+1 < limit && (t[j] == ',' || t[j] == '.') && (t[j+1] == '-' || strings.HasPrefix(t[j+1:limit], "–")) {
		j++
		_, size := runeAt(t, j, limit)
		j += size
	}
	gs := groups[:n]
	decimal := false
	if last := gs[n-1]; n > 1 && (last.sep == ',' || last.sep == '.') {
		same, other := 0, false
		for _, g := range gs[1:] {
			if g.sep == last.sep {
				same++
			} else {
				other = true
			}
		}
		decimal = same == 1 && (other || last.end-last.start != 3)
	}
	intGroups := gs
	if decimal {
		intGroups = gs[:n-1]
	}
	for k, g := range intGroups {
		l := g.end - g.start
		if k > 0 && (l != 3 || g.sep != intGroups[1].sep) || k == 0 && len(intGroups) > 1 && l > 3 {
			return "", 0, false
		}
	}
	var b strings.Builder
	b.Grow(nd + 1)
	for _, g := range intGroups {
		b.WriteString(t[g.start:g.end])
	}
	num := strings.TrimLeft(b.String(), "0")
	if num == "" {
		num = "0"
	}
	if decimal {
		num += "." + t[gs[n-1].start:gs[n-1].end]
	}
	return num, j, true
}

func isDigitAt(t string, i, limit int) bool { return i < limit && t[i] >= '0' && t[i] <= '9' }

// ---- names ----------------------------------------------------------------

// Lower-case words allowed inside a name: Bank of America, Ludwig van
// Beethoven, Banco de España.
var nameConnectors = map[string]bool{
	"of": true, "von": true, "van": true, "der": true, "den": true, "de": true, "da": true, "di": true,
	"del": true, "della": true, "du": true, "des": true, "la": true, "le": true, "dos": true, "das": true,
}

// Titles in front of a name mark a person but are not part of the name.
var nameTitles = map[string]bool{
	"mr": true, "mrs": true, "ms": true, "dr": true, "prof": true, "herr": true, "frau": true,
	"monsieur": true, "madame": true, "mme": true, "señor": true, "señora": true, "sr": true, "sra": true,
	"signor": true, "signora": true, "sig": true, "dhr": true, "mevrouw": true, "mevr": true, "senhor": true,
	"senhora": true, "sir": true, "dear": true, "liebe": true, "lieber": true, "cher": true, "chère": true,
}

var weekdays = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`monday tuesday wednesday thursday friday saturday sunday montag dienstag
mittwoch donnerstag freitag samstag sonntag lundi mardi mercredi jeudi vendredi samedi dimanche lunes martes
miércoles jueves viernes sábado domingo lunedì martedì mercoledì giovedì venerdì sabato domenica maandag dinsdag
woensdag donderdag vrijdag zaterdag zondag segunda terça quarta quinta sexta`) {
		m[w] = true
	}
	return m
})

// nameWord reports whether a token can be part of a name.
func (s *scanner) nameWord(tk token) bool {
	if tk.flags&fCap == 0 || tk.flags&fDigit != 0 || tk.term < 0 {
		return false
	}
	if tk.flags&fLower == 0 && (tk.flags&fUpper == 0 || tk.end-tk.start > 6) {
		return false // a single capital, or a shouted heading word
	}
	tm := &s.terms[tk.term]
	return tm.stop == 0 && !tm.contraction || nameTitles[tm.key] || isConnectorCap(tm.key)
}

// isConnectorCap allows capitalised short words that start names but are
// function words elsewhere ("Van Dyke", "De Vries").
func isConnectorCap(key string) bool { return key == "van" || key == "de" || key == "von" }

// names finds capitalised word sequences. A sequence at a sentence start
// counts only if its first word is not an ordinary word capitalised by
// position; German capitalises every noun, so there a name needs two words,
// a title, or an acronym.
func (s *scanner) names(lang int) {
	toks := s.toks
	for i := 0; i < len(toks); {
		if !s.nameWord(toks[i]) {
			i++
			continue
		}
		last := i
		for j := i + 1; j < len(toks); j++ {
			tj := toks[j]
			if tj.flags&(fJoin|fAmp) == 0 || tj.sent != toks[i].sent {
				break
			}
			if s.nameWord(tj) {
				last = j
				continue
			}
			if tj.flags&fAmp == 0 && tj.flags&fCap == 0 && tj.term >= 0 && nameConnectors[s.terms[tj.term].key] {
				continue
			}
			break
		}
		s.emitName(i, last, lang)
		i = last + 1
	}
}

func (s *scanner) emitName(from, to, lang int) {
	toks := s.toks
	titled := false
	for from <= to && nameTitles[s.terms[toks[from].term].key] {
		from, titled = from+1, true
	}
	for from <= to && isConnectorCap(s.terms[toks[from].term].key) && toks[from].flags&fSentStart != 0 {
		from++
	}
	if from > to || to-from >= 8 {
		return
	}
	first := &s.terms[toks[from].term]
	if toks[from].flags&fSentStart != 0 && !titled {
		if from == to && (!first.midCap || first.lowerSeen) {
			return
		}
		if from < to && first.lowerSeen {
			from++
			first = &s.terms[toks[from].term]
		}
	}
	if from == to && !titled {
		key := first.key
		if first.lowerSeen || fullMonths()[key] || weekdays()[key] || (lang == langDE && toks[from].flags&fUpper == 0) {
			return
		}
	}
	allUpper := true
	for k := from; k <= to; k++ {
		if toks[k].flags&fUpper == 0 {
			allUpper = false
		}
		if k == from || k == to {
			if key := s.terms[toks[k].term].key; fullMonths()[key] || weekdays()[key] {
				return
			}
		}
	}
	if allUpper && to-from >= 2 {
		return // a heading in capitals
	}
	// a name's words are not keywords as well
	for k := from; k <= to; k++ {
		if tm := &s.terms[toks[k].term]; tm.count > 0 {
			tm.count--
		}
	}
	// The text as written keeps inner elisions and ampersands (Banca
	// d'Italia, Procter & Gamble); only its white space is normalised.
	value := cleanSentence(s.text[toks[from].start:toks[to].end], maxNameRunes)
	s.ents[entKey{EntityName, value}]++
}

const maxNameRunes = 120

// entityList ranks entities by count, type and value, keeping at most max
// of each type.
func (s *scanner) entityList(max int) []Entity {
	out := make([]Entity, 0, len(s.ents))
	for k, n := range s.ents {
		out = append(out, Entity{Type: k.typ, Value: k.value, Count: int(n)})
	}
	slices.SortFunc(out, compareEntities)
	var perType [6]int
	kept := out[:0]
	for _, e := range out {
		o := entityOrder(e.Type)
		if perType[o] >= max {
			continue
		}
		perType[o]++
		e.Value = strings.Clone(e.Value)
		kept = append(kept, e)
	}
	return slices.Clip(kept)
}

func compareEntities(a, b Entity) int {
	if c := cmp.Compare(b.Count, a.Count); c != 0 {
		return c
	}
	if c := cmp.Compare(entityOrder(a.Type), entityOrder(b.Type)); c != 0 {
		return c
	}
	return strings.Compare(a.Value, b.Value)
}
