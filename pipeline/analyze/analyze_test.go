package analyze

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

func hasEntity(r SegmentResult, typ, value string) bool {
	return slices.ContainsFunc(r.Entities, func(e Entity) bool { return e.Type == typ && e.Value == value })
}

func hasKeyword(r SegmentResult, term string) bool {
	return slices.ContainsFunc(r.Keywords, func(k Keyword) bool { return k.Term == term })
}

type ent struct{ typ, value string }

func TestAnalyzeSegmentLanguages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		text     string
		lang     string
		entities []ent
		keywords []string
	}{
		{
			name: "english invoice",
			text: `Maria Schneider from Acme Logistics GmbH sent the invoice on 5 March 2024. The invoice total is $1,234.56 and
the invoice is payable by April 30, 2024. Please contact billing@acme-logistics.de with any questions about the invoice.`,
			lang: "en",
			entities: []ent{{"name", "Maria Schneider"}, {"name", "Acme Logistics GmbH"}, {"date", "2024-03-05"},
				{"date", "2024-04-30"}, {"amount", "USD 1234.56"}, {"email", "billing@acme-logistics.de"}},
			keywords: []string{"invoice", "payable", "contact"},
		},
		{
			name: "german letter",
			text: `Sehr geehrte Frau Schneider, vielen Dank für Ihre Bestellung vom 5. März 2024. Die Rechnung über
1.234,56 € wird an die Acme Logistics GmbH in München geschickt. Die Rechnung ist innerhalb von 30 Tagen zu bezahlen.`,
			lang:     "de",
			entities: []ent{{"name", "Schneider"}, {"name", "Acme Logistics GmbH"}, {"date", "2024-03-05"}, {"amount", "EUR 1234.56"}},
			keywords: []string{"rechnung", "bestellung"},
		},
		{
			name: "french contract",
			text: `Le contrat a été signé le 1er mars 2024 par Jean Dupont au nom de la Banque de France. Le montant total
du contrat est de 12 500 euros et sera payé en deux fois.`,
			lang:     "fr",
			entities: []ent{{"name", "Jean Dupont"}, {"name", "Banque de France"}, {"date", "2024-03-01"}, {"amount", "EUR 12500"}},
			keywords: []string{"contrat", "montant"},
		},
		{
			name: "spanish contract",
			text: `El contrato fue firmado el 5 de marzo de 2024 por Carlos García en nombre de Telefónica. El importe total
del contrato es de 3.500,00 € y se pagará en dos plazos.`,
			lang:     "es",
			entities: []ent{{"name", "Carlos García"}, {"name", "Telefónica"}, {"date", "2024-03-05"}, {"amount", "EUR 3500.00"}},
			keywords: []string{"contrato", "importe"},
		},
		{
			name: "italian contract",
			text: `Il contratto è stato firmato il 5 marzo 2024 da Giulia Rossi per conto della Banca d'Italia. L'importo
totale del contratto è di 2.000 euro e sarà pagato entro la fine del mese.`,
			lang:     "it",
			entities: []ent{{"name", "Giulia Rossi"}, {"name", "Banca d'Italia"}, {"date", "2024-03-05"}, {"amount", "EUR 2000"}},
			keywords: []string{"contratto", "importo"},
		},
		{
			name: "dutch agreement",
			text: `De overeenkomst is op 5 maart 2024 ondertekend door Jan de Vries namens Philips. Het totale bedrag van
de overeenkomst, € 4.250,00, wordt binnen dertig dagen betaald.`,
			lang:     "nl",
			entities: []ent{{"name", "Jan de Vries"}, {"name", "Philips"}, {"date", "2024-03-05"}, {"amount", "EUR 4250.00"}},
			keywords: []string{"overeenkomst", "bedrag"},
		},
		{
			name: "portuguese contract",
			text: `O contrato foi assinado em 5 de março de 2024 por João Silva em nome da Petrobras. O valor total do
contrato é de R$ 10.000,00 e será pago em duas parcelas.`,
			lang:     "pt",
			entities: []ent{{"name", "João Silva"}, {"name", "Petrobras"}, {"date", "2024-03-05"}, {"amount", "BRL 10000.00"}},
			keywords: []string{"contrato", "parcelas"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := AnalyzeSegment(tt.text, Options{})
			if r.Language != tt.lang {
				t.Errorf("language = %q, want %q", r.Language, tt.lang)
			}
			for _, e := range tt.entities {
				if !hasEntity(r, e.typ, e.value) {
					t.Errorf("missing entity %s %q in %+v", e.typ, e.value, r.Entities)
				}
			}
			for _, k := range tt.keywords {
				if !hasKeyword(r, k) {
					t.Errorf("missing keyword %q in %+v", k, r.Keywords)
				}
			}
			if r.Keywords[0].Count < 2 {
				t.Errorf("top keyword %+v: want the repeated term first", r.Keywords[0])
			}
			for _, k := range r.Keywords {
				if _, stop := stopwords()[k.Term]; stop && isStopword(stopwords()[k.Term], langOf(tt.lang)) {
					t.Errorf("stopword %q among keywords", k.Term)
				}
			}
		})
	}
}

func TestEntities(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		text string
		opts Options
		want []ent
		not  []ent
	}{
		{name: "email lower-cased", text: "Write to Billing.Team@Example.COM today.",
			want: []ent{{"email", "billing.team@example.com"}}},
		{name: "email needs a domain", text: "Ping me @home or at user@localhost please.", not: []ent{{"email", "user@localhost"}}},
		{name: "url trailing punctuation", text: "See https://example.com/a/b?x=1. Or (https://example.org/wiki/Go_(lang)), fine.",
			want: []ent{{"url", "https://example.com/a/b?x=1"}, {"url", "https://example.org/wiki/Go_(lang)"}}},
		{name: "www url host lower-cased", text: "Visit WWW.Example.com/Path for more.", want: []ent{{"url", "www.example.com/Path"}}},
		{name: "email inside url belongs to url", text: "Open ftp://anna@files.example.net/pub now.",
			want: []ent{{"url", "ftp://anna@files.example.net/pub"}}, not: []ent{{"email", "anna@files.example.net"}}},
		{name: "iso date", text: "Signed on 2024-03-05 in Bonn.", want: []ent{{"date", "2024-03-05"}}},
		{name: "day month year", text: "Signed on 5 March 2024 and on the 21st of June, 2023.",
			want: []ent{{"date", "2024-03-05"}, {"date", "2023-06-21"}}},
		{name: "month day year", text: "Due March 5, 2024 or Sept. 1st 2024.", want: []ent{{"date", "2024-03-05"}, {"date", "2024-09-01"}}},
		{name: "month year", text: "Shipments start in April 2024 as planned.", want: []ent{{"date", "2024-04"}}},
		{name: "ambiguous numeric date in english stays", text: "The meeting on 05/03/2024 was moved to 13/03/2024 and then to 03/14/2024.",
			want: []ent{{"date", "05/03/2024"}, {"date", "2024-03-13"}, {"date", "2024-03-14"}}},
		{name: "numeric date with explicit order", text: "The meeting on 05/03/2024 was moved.", opts: Options{DateOrder: DateOrderMDY},
			want: []ent{{"date", "2024-05-03"}}},
		{name: "numeric date in german is day first", text: "Die Sitzung am 05/03/2024 wurde auf den 12.04.2024 verschoben und ist damit später.",
			want: []ent{{"date", "2024-03-05"}, {"date", "2024-04-12"}}},
		{name: "same day and month is unambiguous", text: "The parcel arrived on 04/04/2024 at noon.", want: []ent{{"date", "2024-04-04"}}},
		{name: "impossible dates are not dates", text: "Codes 31/02/2024 and 2024-13-01 and 1.2.3 are not dates.",
			not: []ent{{"date", "31/02/2024"}, {"date", "2024-02-31"}}},
		{name: "amounts", text: "Fees: $1,234.56, EUR 300, 12.50 €, £12, CHF 1'250.00, US$ 5 and 300 euros.",
			want: []ent{{"amount", "USD 1234.56"}, {"amount", "EUR 300"}, {"amount", "EUR 12.50"}, {"amount", "GBP 12"},
				{"amount", "CHF 1250.00"}, {"amount", "USD 5"}}},
		{name: "european amounts", text: "Der Betrag von 1.234,56 € und 300,- EUR sowie 12,5 € ist fällig.",
			want: []ent{{"amount", "EUR 1234.56"}, {"amount", "EUR 300"}, {"amount", "EUR 12.5"}}},
		{name: "plain numbers are not amounts", text: "We shipped 1,200 pallets in 2024 to 14 customers.", not: []ent{{"amount", "USD 1200"}}},
		{name: "names mid-sentence", text: "The report was approved by Maria Schneider and Procter & Gamble with Bank of America.",
			want: []ent{{"name", "Maria Schneider"}, {"name", "Procter & Gamble"}, {"name", "Bank of America"}}},
		{name: "title stripped", text: "Yesterday Dr. Anna Keller met Mr. Brown in the office.",
			want: []ent{{"name", "Anna Keller"}, {"name", "Brown"}}, not: []ent{{"name", "Yesterday"}}},
		{name: "sentence start words are not names", text: "The company grew. Revenue rose in Berlin. Costs fell. The costs in Berlin fell too.",
			want: []ent{{"name", "Berlin"}}, not: []ent{{"name", "The"}, {"name", "Revenue"}, {"name", "Costs"}}},
		{name: "name at sentence start", text: "Maria Schneider signed the contract. Later Maria Schneider left.",
			want: []ent{{"name", "Maria Schneider"}}},
		{name: "months and headings are not names", text: "It happened in early March. The TERMS AND CONDITIONS apply on Monday.",
			not: []ent{{"name", "March"}, {"name", "TERMS AND CONDITIONS"}, {"name", "Monday"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := AnalyzeSegment(tt.text, tt.opts)
			for _, e := range tt.want {
				if !hasEntity(r, e.typ, e.value) {
					t.Errorf("missing %s %q in %+v", e.typ, e.value, r.Entities)
				}
			}
			for _, e := range tt.not {
				if hasEntity(r, e.typ, e.value) {
					t.Errorf("unexpected %s %q in %+v", e.typ, e.value, r.Entities)
				}
			}
		})
	}
}

func TestEntityCountsAndOrder(t *testing.T) {
	t.Parallel()
	text := "Contact anna@example.com. Anna wrote again from anna@example.com and from ben@example.com on 2024-01-02."
	r := AnalyzeSegment(text, Options{})
	want := []Entity{
		{Type: "email", Value: "anna@example.com", Count: 2},
		{Type: "date", Value: "2024-01-02", Count: 1},
		{Type: "email", Value: "ben@example.com", Count: 1},
	}
	if !slices.Equal(r.Entities, want) {
		t.Errorf("entities = %+v, want %+v", r.Entities, want)
	}
}

func TestKeywords(t *testing.T) {
	t.Parallel()
	text := `Invoice processing takes time. The invoice team checks every invoice's line items;
processing errors delay payment. Payment terms: thirty days. Invoices that fail processing are returned.`
	r := AnalyzeSegment(text, Options{MaxKeywords: 3})
	want := []Keyword{{"invoice", 3}, {"processing", 3}, {"payment", 2}}
	if !slices.Equal(r.Keywords, want) {
		t.Errorf("keywords = %+v, want %+v", r.Keywords, want)
	}
}

func TestSentencesAndWords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text             string
		sentences, words int
	}{
		{"", 0, 0},
		{"One sentence only", 1, 3},
		{"Dr. Smith met J. R. Tolkien at 5 p.m. in the U.S. office. They talked.", 2, 15},
		{"First line wraps across a long line of prose that keeps going on\nand ends here. Second!", 2, 17},
		{"HEADING\nBody text follows the heading in a paragraph of its own.", 2, 12},
		{"1. Scope\n2. Terms\n\nThe parties agree. Really? Yes...", 5, 9},
		{"Visit www.example.com. Then mail a.b@example.org. Done.", 3, 6},
	}
	for _, tt := range tests {
		r := AnalyzeSegment(tt.text, Options{})
		if r.Sentences != tt.sentences || r.Words != tt.words {
			t.Errorf("%q: sentences, words = %d, %d, want %d, %d", tt.text, r.Sentences, r.Words, tt.sentences, tt.words)
		}
		if r.Chars != utf8.RuneCountInString(tt.text) {
			t.Errorf("%q: chars = %d", tt.text, r.Chars)
		}
	}
}

func TestSummary(t *testing.T) {
	t.Parallel()
	text := `We had a quiet start to the year. Weather was mild in the north.
Shipping volume in the network rose as shipping customers moved their network freight to us.
Lunch was served at noon. The network and shipping teams plan more network capacity for shipping next year.
Nobody complained about the parking.`
	r := AnalyzeSegment(text, Options{SummarySentences: 2})
	if len(r.Summary) != 2 {
		t.Fatalf("summary = %+v, want 2 sentences", r.Summary)
	}
	want := []string{
		"Shipping volume in the network rose as shipping customers moved their network freight to us.",
		"The network and shipping teams plan more network capacity for shipping next year.",
	}
	for i, s := range r.Summary {
		if s.Text != want[i] {
			t.Errorf("summary[%d] = %q, want %q", i, s.Text, want[i])
		}
		if s.Score <= 0 {
			t.Errorf("summary[%d] score = %v", i, s.Score)
		}
	}
	if got := r.SummaryText(); got != want[0]+" "+want[1] {
		t.Errorf("SummaryText = %q", got)
	}
}

func TestSummaryBounded(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("network capacity planning matters for every shipping region ", 40) + "."
	text := long + " " + long + " Short network shipping note here."
	r := AnalyzeSegment(text, Options{SummaryChars: 200})
	total := 0
	for _, s := range r.Summary {
		total += utf8.RuneCountInString(s.Text) + 1
	}
	if len(r.Summary) == 0 || total-1 > 200 {
		t.Errorf("summary %d chars over %d sentences, want 1..200 chars", total-1, len(r.Summary))
	}
	for _, s := range r.Summary {
		if utf8.RuneCountInString(s.Text) > maxSentenceRunes {
			t.Errorf("sentence of %d runes", utf8.RuneCountInString(s.Text))
		}
	}
}

func TestUndetermined(t *testing.T) {
	t.Parallel()
	for _, text := range []string{"", "   \n\t", "OK", "12345 67890", "\x00\x01\x02\xff\xfe binary", "Acme GmbH"} {
		if r := AnalyzeSegment(text, Options{}); r.Language != Undetermined {
			t.Errorf("%q: language %q, want und", text, r.Language)
		}
	}
	if r := AnalyzeSegment("Acme GmbH", Options{Language: "de"}); r.Language != "de" {
		t.Errorf("forced language = %q", r.Language)
	}
}

func TestRobustInput(t *testing.T) {
	t.Parallel()
	inputs := []string{
		"\xff\xfe\xfd invalid \xc3\x28 utf8 Maria Schneider paid $5",
		strings.Repeat("\x00", 5000),
		strings.Repeat("a@", 3000) + "b.com",
		strings.Repeat("http://", 2000),
		strings.Repeat("1,", 5000) + " €",
		strings.Repeat("Ab ", 50_000),
		"e\u0301cole ﬁnance ﬁnance", // decomposed accent and ligature
	}
	for _, in := range inputs {
		r := AnalyzeSegment(in, Options{})
		checkInvariants(t, in, Options{}, r)
	}
	r := AnalyzeSegment("e\u0301cole ﬁnance ﬁnance école", Options{})
	if !hasKeyword(r, "finance") || !slices.Contains(r.Keywords, Keyword{"école", 2}) {
		t.Errorf("normalisation: keywords %+v", r.Keywords)
	}
}

func TestTruncation(t *testing.T) {
	t.Parallel()
	page, err := os.ReadFile("testdata/page_en.txt")
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat(string(page)+"\n\n", 1+DefaultMaxBytes/len(page))
	r := AnalyzeSegment(big+"ü", Options{})
	if !r.Truncated || r.Chars > DefaultMaxBytes {
		t.Errorf("truncated = %v, chars = %d", r.Truncated, r.Chars)
	}
	r = AnalyzeSegment("Grüße aus Köln", Options{MaxBytes: 3}) // cut inside ü
	if !r.Truncated || r.Chars != 2 {
		t.Errorf("cut inside a rune: %+v", r)
	}
	checkInvariants(t, big, Options{}, AnalyzeSegment(big, Options{}))
}

func TestDeterministic(t *testing.T) {
	t.Parallel()
	page, err := os.ReadFile("testdata/page_en.txt")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(AnalyzeSegment(string(page), Options{}))
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				got, _ := json.Marshal(AnalyzeSegment(string(page), Options{}))
				if string(got) != string(want) {
					t.Errorf("result differs:\n%s\n%s", got, want)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestPage(t *testing.T) {
	t.Parallel()
	page, err := os.ReadFile("testdata/page_en.txt")
	if err != nil {
		t.Fatal(err)
	}
	r := AnalyzeSegment(string(page), Options{})
	if r.Language != "en" {
		t.Errorf("language %q", r.Language)
	}
	for _, e := range []ent{
		{"name", "Maria Schneider"}, {"name", "Globex Corporation"}, {"name", "Jean Dupont"}, {"name", "Banque de France"},
		{"name", "Peter van der Berg"}, {"name", "Rotterdam"}, {"date", "2024-01-01"}, {"date", "2024-03-31"},
		{"date", "2024-02-12"}, {"date", "2024-06-03"}, {"date", "2024-04"}, {"amount", "EUR 4250000"},
		{"amount", "USD 1234.56"}, {"amount", "GBP 86300"}, {"email", "operations@acme-logistics.de"},
		{"url", "https://investors.acme-logistics.de/reports/2024-q1"},
	} {
		if !hasEntity(r, e.typ, e.value) {
			t.Errorf("missing %s %q", e.typ, e.value)
		}
	}
	if !hasKeyword(r, "logistics") && !hasKeyword(r, "shipments") {
		t.Errorf("keywords %+v", r.Keywords)
	}
	checkInvariants(t, string(page), Options{}, r)
}

// checkInvariants asserts what must hold for any input.
func checkInvariants(t *testing.T, in string, opts Options, r SegmentResult) {
	t.Helper()
	o := opts.withDefaults()
	if len(r.Keywords) > o.MaxKeywords {
		t.Errorf("%d keywords", len(r.Keywords))
	}
	perType := map[string]int{}
	for i, e := range r.Entities {
		perType[e.Type]++
		if e.Count <= 0 || e.Value == "" || !utf8.ValidString(e.Value) {
			t.Errorf("bad entity %+v", e)
		}
		if i > 0 && compareEntities(r.Entities[i-1], e) >= 0 {
			t.Errorf("entities out of order at %d: %+v", i, r.Entities)
		}
	}
	for typ, n := range perType {
		if n > o.MaxEntities {
			t.Errorf("%d entities of type %s", n, typ)
		}
	}
	for i, k := range r.Keywords {
		if k.Count <= 0 || !utf8.ValidString(k.Term) || k.Term != strings.ToLower(k.Term) {
			t.Errorf("bad keyword %+v", k)
		}
		if i > 0 && (r.Keywords[i-1].Count < k.Count || r.Keywords[i-1].Count == k.Count && r.Keywords[i-1].Term >= k.Term) {
			t.Errorf("keywords out of order: %+v", r.Keywords)
		}
	}
	if len(r.Summary) > o.SummarySentences {
		t.Errorf("%d summary sentences", len(r.Summary))
	}
	if n := utf8.RuneCountInString(r.SummaryText()); n > o.SummaryChars {
		t.Errorf("summary of %d chars", n)
	}
	if r.Chars > len(in) || r.Words > r.Chars || r.Sentences > r.Chars {
		t.Errorf("counts chars=%d words=%d sentences=%d for %d bytes", r.Chars, r.Words, r.Sentences, len(in))
	}
	if r.Language == "" {
		t.Error("empty language")
	}
	if _, err := json.Marshal(r); err != nil {
		t.Error(err)
	}
}

func FuzzAnalyzeSegment(f *testing.F) {
	page, err := os.ReadFile("testdata/page_en.txt")
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"", string(page), "5. März 2024 1.234,56 € a@b.co http://x.io (", "\xff\xfe", "US$", "R$ 1,-",
		"March 5th", "1 de", "www.a.bc@d.ef", "Mr. & Van", "l'É", "…!?"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, in string, n int) {
		opts := Options{MaxKeywords: n % 20, SummarySentences: n % 5, SummaryChars: n % 700, MaxEntities: n % 30}
		r := AnalyzeSegment(in, opts)
		checkInvariants(t, in, opts, r)
		a, _ := json.Marshal(r)
		b, _ := json.Marshal(AnalyzeSegment(in, opts))
		if string(a) != string(b) {
			t.Errorf("not deterministic:\n%s\n%s", a, b)
		}
	})
}

func TestJSONShape(t *testing.T) {
	t.Parallel()
	r := AnalyzeSegment("Maria Schneider paid EUR 300 on 2024-03-05. Maria Schneider paid again.", Options{})
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back SegmentResult
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if again, _ := json.Marshal(back); string(again) != string(b) {
		t.Errorf("round trip changed the result:\n%s\n%s", b, again)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"language", "keywords", "entities", "summary", "chars", "words", "sentences"} {
		if _, ok := keys[k]; !ok {
			t.Errorf("field %q missing from %s", k, b)
		}
	}
	if _, ok := keys["truncated"]; ok {
		t.Errorf("truncated should be omitted when false: %s", b)
	}
}

func TestOptionsClamped(t *testing.T) {
	t.Parallel()
	o := Options{MaxKeywords: 1 << 30, MaxEntities: -1, SummarySentences: 99, SummaryChars: 1 << 30, MaxBytes: 1 << 40}.withDefaults()
	want := Options{MaxKeywords: 100, MaxEntities: DefaultMaxEntities, SummarySentences: 10, SummaryChars: 10_000, MaxBytes: 64 << 20}
	if o != want {
		t.Errorf("withDefaults = %+v, want %+v", o, want)
	}
}
