package pdfgen

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Vocabulary for realistic business prose: names (some with accents that
// exercise WinAnsi), companies, places, and the shapes of dates, e-mail
// addresses, amounts and reference numbers that entity extraction looks for.
var (
	firstNames = []string{"Alice", "Bernard", "Chloé", "Daniel", "Elena", "François", "Grace", "Hiroshi",
		"Ingrid", "José", "Karen", "Lukas", "Maria", "Nadia", "Oliver", "Priya", "Quentin", "Rafael",
		"Sofia", "Thomas", "Ursula", "Viktor", "Wei", "Yasmin", "Zoë"}
	lastNames = []string{"Anderson", "Bäcker", "Castillo", "Dubois", "Eriksen", "Fischer", "García", "Hansen",
		"Ivanova", "Jensen", "Kowalski", "Laurent", "Müller", "Nakamura", "O'Brien", "Petrov", "Quinn",
		"Rossi", "Schmidt", "Tanaka", "Umarov", "Valdés", "Walsh", "Yilmaz", "Zimmermann"}
	companies = []string{"Northwind Logistics", "Acme Industrial", "Bluefin Analytics", "Cedar & Pine Legal",
		"Delta Freight Services", "Evergreen Health Partners", "Fjord Maritime", "Granite Capital",
		"Helios Energy", "Ironbridge Construction", "Juniper Pharmaceuticals", "Kestrel Aviation"}
	cities = []string{"Amsterdam", "Berlin", "Chicago", "Dublin", "Edinburgh", "Frankfurt", "Geneva",
		"Hamburg", "Istanbul", "Johannesburg", "Kraków", "Lisbon", "Madrid", "Nairobi", "Oslo", "Paris",
		"Québec", "Rotterdam", "Singapore", "Toronto", "Vienna", "Warsaw", "Zürich"}
	months = []string{"January", "February", "March", "April", "May", "June", "July", "August",
		"September", "October", "November", "December"}
	documents = []string{"purchase agreement", "service contract", "shipping manifest", "audit report",
		"lease renewal", "invoice", "insurance claim", "quarterly forecast", "compliance review",
		"maintenance schedule"}
	subjects = []string{"The committee", "The auditor", "Our finance team", "The carrier", "The board",
		"The project office", "The regional manager", "Customer support", "The legal department"}
	verbs = []string{"approved", "reviewed", "postponed", "signed", "disputed", "amended", "received",
		"forwarded", "archived", "confirmed"}
	fillers = []string{
		"Delivery windows remain subject to customs clearance and local holidays.",
		"All figures are stated before tax unless noted otherwise.",
		"The parties agree that this schedule supersedes earlier correspondence.",
		"Outstanding balances accrue interest at the contractual rate.",
		"Inventory levels were reconciled against the warehouse management system.",
		"Questions about this statement should reference the account number below.",
		"Temperature-sensitive goods were stored in the refrigerated section.",
		"No exceptions were found during the sampling of supporting documents.",
	}
	titles = []string{"Quarterly Operations Report", "Statement of Account", "Shipment Summary",
		"Contract Review Notes", "Board Meeting Minutes", "Audit Findings", "Vendor Assessment"}
)

// textGen produces deterministic prose from a seeded source.
type textGen struct{ r *rand.Rand }

func (g *textGen) pick(list []string) string { return list[g.r.IntN(len(list))] }

func (g *textGen) person() string { return g.pick(firstNames) + " " + g.pick(lastNames) }

func (g *textGen) date() string {
	y, m, d := 2019+g.r.IntN(7), g.r.IntN(12), 1+g.r.IntN(28)
	switch g.r.IntN(3) {
	case 0:
		return fmt.Sprintf("%d-%02d-%02d", y, m+1, d)
	case 1:
		return fmt.Sprintf("%s %d, %d", months[m], d, y)
	}
	return fmt.Sprintf("%d %s %d", d, months[m], y)
}

func (g *textGen) email() string {
	first := asciiFold(strings.ToLower(g.pick(firstNames)))
	last := asciiFold(strings.ToLower(strings.ReplaceAll(g.pick(lastNames), "'", "")))
	domain := strings.ToLower(strings.Fields(g.pick(companies))[0])
	return fmt.Sprintf("%s.%s@%s.example.com", first, last, domain)
}

func (g *textGen) amount() string {
	cents := g.r.IntN(100)
	whole := g.r.IntN(250_000)
	s := groupThousands(whole)
	switch g.r.IntN(3) {
	case 0:
		return fmt.Sprintf("$%s.%02d", s, cents)
	case 1:
		return fmt.Sprintf("€%s.%02d", s, cents)
	}
	return fmt.Sprintf("%s.%02d USD", s, cents)
}

func (g *textGen) reference() string {
	switch g.r.IntN(3) {
	case 0:
		return fmt.Sprintf("INV-%d-%05d", 2019+g.r.IntN(7), g.r.IntN(100000))
	case 1:
		return fmt.Sprintf("marker%05d", g.r.IntN(100000))
	}
	return fmt.Sprintf("PO%07d", g.r.IntN(10_000_000))
}

// sentence returns one sentence built from a random template.
func (g *textGen) sentence() string {
	switch g.r.IntN(7) {
	case 0:
		return fmt.Sprintf("%s %s the %s with %s on %s for %s.",
			g.pick(subjects), g.pick(verbs), g.pick(documents), g.pick(companies), g.date(), g.amount())
	case 1:
		return fmt.Sprintf("Please contact %s at %s before %s regarding %s.",
			g.person(), g.email(), g.date(), g.reference())
	case 2:
		return fmt.Sprintf("Shipment %s left %s on %s and reached %s two days later.",
			g.reference(), g.pick(cities), g.date(), g.pick(cities))
	case 3:
		return fmt.Sprintf("%s from %s %s a payment of %s under reference %s.",
			g.person(), g.pick(companies), g.pick(verbs), g.amount(), g.reference())
	case 4:
		return fmt.Sprintf("The %s prepared by %s in %s was %s by %s.",
			g.pick(documents), g.person(), g.pick(cities), g.pick(verbs), g.person())
	}
	return g.pick(fillers)
}

func groupThousands(n int) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// asciiFold maps the accented letters of the vocabulary onto ASCII for
// e-mail addresses.
func asciiFold(s string) string {
	return strings.NewReplacer("é", "e", "ç", "c", "ë", "e", "ä", "a", "ü", "u", "í", "i", "á", "a",
		"ö", "o", "ó", "o", "è", "e").Replace(s)
}
