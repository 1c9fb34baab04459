package analyze

import (
	"math/bits"
	"strings"
	"sync"
	"unicode/utf8"
)

// Languages the analyzer recognises, in tie-break order.
var languages = [...]string{"en", "de", "fr", "es", "it", "nl", "pt"}

const (
	langEN = iota
	langDE
	langFR
	langES
	langIT
	langNL
	langPT
	numLangs
)

// Undetermined is the ISO 639 code for "language not identified".
const Undetermined = "und"

// Function words per language. They serve twice: a text's language is the
// one whose function words it uses most, and they are dropped from keywords.
var stopwordLists = [numLangs]string{
	langEN: `a about above after again against all also am an and any are aren as at be because been before being
below between both but by can cannot could did do does doing done down during each either etc even ever every few
for from further had has have having he her here hers herself him himself his how however i if in into is it its
itself just least less let like made make many may me might more most much must my myself neither no nor not now of
off often on once one only onto or other others otherwise our ours ourselves out over own per please same shall she
should since so some such than that the their theirs them themselves then there therefore these they this those
though through thus to too toward towards under unless until up upon us use used using very via was we well were
what whatever when where whereas whether which while who whom whose why will with within without would yet you your
yours yourself yourselves`,
	langDE: `aber alle allem allen aller alles als also am an ander andere anderen anderer anderes auch auf aus bei
beim bereits bin bis bist bzw da dabei dadurch dafür daher damit dann daran darauf darf darin darüber das dass
davon dazu dein deine dem den denen denn der deren des dessen dich die dies diese diesem diesen dieser dieses dir
doch dort du durch ein eine einem einen einer eines einige einigen er es etwa euch euer eure für gegen gewesen hab
habe haben hat hatte hatten hier hin hinter ich ihm ihn ihnen ihr ihre ihrem ihren ihrer ihres im in indem ins ist
jede jedem jeden jeder jedes jedoch jetzt kann kein keine keinem keinen keiner können könnte man manche mehr mein
meine mich mir mit muss musste müssen nach nachdem nicht nichts noch nun nur ob oder ohne schon sehr sein seine
seinem seinen seiner seit sich sie sind so solche soll sollen sollte sondern sonst sowie über um und uns unser
unsere unter vom von vor wann war waren warum was weil weiter welche welchem welchen welcher welches wenn wer werde
werden wie wieder will wir wird wirst wo wurde wurden würde zu zum zur zwar zwischen`,
	langFR: `à afin ai ainsi alors après as au aucun aussi autre autres aux avait avant avec avez avoir avons ayant
bien car ce ceci cela celle celles celui cependant ces cet cette ceux chaque chez comme comment dans de depuis des
dont du elle elles en encore entre est et était étaient été être eu eux fait faire il ils je jusqu jusque la le
les leur leurs lors lorsque lui ma mais me même mes moi mon ne ni nos notre nous on ont ou où par parce pas pendant
peu peut plus pour pourquoi puis qu quand que quel quelle quelles quels qui sa sans se selon sera ses si sinon soit
son sont sous sur ta te tes toi ton tous tout toute toutes très tu un une vers vos votre vous y`,
	langES: `a al algo algunas algunos ante antes aquí así aunque cada como con contra cual cuales cuando de del
desde donde durante e el ella ellas ellos en entre era eran es esa esas ese eso esos esta estaba estado estamos
están estar estas este esto estos está fue fueron ha había han hasta hay la las le les lo los mas más me mi mientras
mis muy nada ni no nos nosotros nuestra nuestro o os otra otras otro otros para pero poco por porque pues que quien
quienes se sea según ser si sido siempre sin sino sobre son su sus también tanto te tiene tienen todo todos tu tus
un una uno unos usted ustedes y ya él`,
	langIT: `a ad agli ai al alla alle allo anche ancora avere aveva avevano c che chi ci come con contro cosa così
cui da dagli dai dal dalla dalle degli dei del della delle dello di dopo dove e è ed era erano essere essa esso fra
gli ha hanno ho i il in io la le lei li lo loro lui ma mi mia mie miei mio molto ne negli nei nel nella nelle nello
noi non nostra nostro o ogni oppure per perché però più poi quale quali quando quanto quella quelle quelli quello
questa queste questi questo se sei senza si sia siamo siete solo sono stata stati stato su sua sue sugli sui sul
sulla suo suoi tra tu tutta tutte tutti tutto un una uno vi voi`,
	langNL: `aan al alle alleen als alles bij dan dat de der deze die dit doch door dus een eens en er ge geen geweest
had haar heb hebben heeft hem het hier hij hoe hun ik in is ja je kan kon kunnen maar me meer men met mij mijn na
naar niet niets nog nu of om omdat ons onze ook op over reeds te tegen toch toen tot u uit van veel voor want waren
was wat we wel werd wie wij wil worden wordt zal ze zei zelf zich zij zijn zo zonder zou zullen`,
	langPT: `a à ao aos aquela aquele aqui as às até com como da das de dela dele deles depois do dos e é ela elas
ele eles em entre era eram essa essas esse esses esta está estão estas este estes eu foi foram há isso isto já lhe
lhes mais mas me mesmo meu minha muito na nas nem no nos nossa nosso não num numa o os ou para pela pelas pelo pelos
pode por porque qual quando que quem se sem ser seu seus sido sobre sua suas são também te tem têm todo todos um uma
umas uns você vocês`,
}

// stopwords maps a lower-case word to the bit set of languages it is a
// function word of. This table and the package's other word lists are
// built on first use: every docpipe command links the package, and only
// those that analyse text should pay for them.
var stopwords = sync.OnceValue(func() map[string]uint8 {
	m := make(map[string]uint8, 1200)
	for l, list := range stopwordLists {
		for _, w := range strings.Fields(list) {
			m[w] |= 1 << l
		}
	}
	return m
})

// langOf returns the index of code in languages, or -1.
func langOf(code string) int {
	for i, l := range languages {
		if l == code {
			return i
		}
	}
	return -1
}

// isStopword reports whether key is a function word of language l, or of
// English: English phrases turn up in documents of every language.
func isStopword(mask uint8, l int) bool {
	if l < 0 {
		return mask != 0
	}
	return mask&(1<<l|1<<langEN) != 0
}

// featureMask returns the languages whose letters or letter groups a word
// shows: these decide short texts that have few function words.
func featureMask(w string) uint8 {
	var m uint8
	ascii := true
	for i := 0; i < len(w); i++ {
		switch c := w[i]; {
		case c >= utf8.RuneSelf:
			ascii = false
		case c == 'j' && i > 0 && w[i-1] == 'i':
			m |= 1 << langNL
		case c == 'h' && i > 0 && w[i-1] == 's':
			m |= 1 << langEN
		}
	}
	if !ascii {
		for _, r := range w {
			m |= letterLangs[r]
		}
	}
	for _, sf := range suffixLangs[w[len(w)-1]] {
		if strings.HasSuffix(w, sf.suffix) {
			m |= sf.langs
			break
		}
	}
	return m
}

// letterLangs maps letters to the languages that use them.
var letterLangs = map[rune]uint8{
	'ß': 1 << langDE, 'ä': 1 << langDE, 'ö': 1 << langDE, 'ü': 1<<langDE | 1<<langES,
	'ñ': 1 << langES, 'á': 1<<langES | 1<<langPT, 'í': 1<<langES | 1<<langPT, 'ó': 1<<langES | 1<<langPT,
	'ú': 1<<langES | 1<<langPT, 'ã': 1 << langPT, 'õ': 1 << langPT, 'ç': 1<<langFR | 1<<langPT,
	'œ': 1 << langFR, 'ê': 1<<langFR | 1<<langPT, 'â': 1<<langFR | 1<<langPT, 'î': 1 << langFR, 'û': 1 << langFR,
	'ë': 1<<langFR | 1<<langNL, 'ï': 1<<langFR | 1<<langNL,
	'é': 1<<langFR | 1<<langPT | 1<<langES | 1<<langIT, 'è': 1<<langFR | 1<<langIT, 'à': 1<<langFR | 1<<langIT,
	'ù': 1<<langFR | 1<<langIT, 'ì': 1 << langIT, 'ò': 1 << langIT,
}

type suffixLang struct {
	suffix string
	langs  uint8
}

// suffixLangs holds typical word endings, indexed by their last byte.
var suffixLangs = func() (t [256][]suffixLang) {
	for _, sl := range []suffixLang{
		{"ção", 1 << langPT}, {"ções", 1 << langPT}, {"ão", 1 << langPT},
		{"ción", 1 << langES}, {"ciones", 1 << langES}, {"dad", 1 << langES},
		{"zione", 1 << langIT}, {"zioni", 1 << langIT}, {"ità", 1 << langIT},
		{"ung", 1 << langDE}, {"keit", 1 << langDE}, {"heit", 1 << langDE}, {"lich", 1 << langDE},
		{"heid", 1 << langNL}, {"lijk", 1 << langNL},
		{"ing", 1 << langEN}, {"ly", 1 << langEN},
		{"eux", 1 << langFR}, {"ement", 1 << langFR},
	} {
		last := sl.suffix[len(sl.suffix)-1]
		t[last] = append(t[last], sl)
	}
	return t
}()

// langScores accumulates evidence for each language.
type langScores [numLangs]float64

// add counts n occurrences of a word with the given stopword and feature
// masks. A word shared by several languages counts for each of them in
// proportion, so distinctive words decide.
func (s *langScores) add(stop, feat uint8, n int) {
	if stop != 0 {
		w := float64(n) / float64(bits.OnesCount8(stop))
		for l := range numLangs {
			if stop&(1<<l) != 0 {
				s[l] += w
			}
		}
	}
	if feat != 0 {
		w := 0.3 * float64(n) / float64(bits.OnesCount8(feat))
		for l := range numLangs {
			if feat&(1<<l) != 0 {
				s[l] += w
			}
		}
	}
}

// best returns the winning language index, or -1 when the evidence is too
// thin or tied.
func (s *langScores) best(words int) int {
	if words < 3 {
		return -1
	}
	bi, tie := -1, false
	var bv float64
	for l, v := range s {
		switch {
		case v > bv:
			bi, bv, tie = l, v, false
		case v == bv && v > 0:
			tie = true
		}
	}
	if bv < 1 || tie {
		return -1
	}
	return bi
}
