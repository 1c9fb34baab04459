#!/usr/bin/env bash
# Builds a corpus of PDFs made by real producers (groff, enscript and
# Ghostscript, pdfTeX, LibreOffice, Chromium, qpdf) into DIR, for the
# comparison of the pure-Go extractor with pdftotext
# (pipeline/extract/pdftext/corpus_test.go, run by `make corpus`).
#
# usage: samples/corpus/build.sh DIR
#
# A producer that is not installed leaves NAME.skip holding the reason
# instead of NAME.pdf, so the comparison reports it rather than missing it.
# Debian packages: groff enscript ghostscript qpdf texlive-latex-base
# texlive-fonts-recommended libreoffice-writer-nogui chromium poppler-utils
set -u -o pipefail

out=${1:?usage: build.sh DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

skip() { # name reason
	printf '%s\n' "$2" >"$out/$1.skip"
	echo "skip $1: $2" >&2
}
have() { command -v "$1" >/dev/null 2>&1; }
made() { # name file
	if [ -s "$2" ]; then
		mv "$2" "$out/$1.pdf" && rm -f "$out/$1.skip" && echo "made $1.pdf" >&2
	else
		skip "$1" "producer ran but wrote no PDF (see the log above)"
	fi
}

# Prose with the words ligatures break (fi, fl, ff, ffi, ffl) and long words
# that narrow columns make TeX hyphenate.
paragraph() { # n
	cat <<EOF
Paragraph $1. The confidential workflow of the office is efficient and
affluent; the official staff find the offline files baffling, shuffle
the effluent reports and fly to the fjords. Internationalization,
characteristically incomprehensible, responsibilities, telecommunications
and electroencephalography are long words that narrow columns hyphenate.
Sufficiently effective, the difficult afflictions differ from the fluffy
suffixes; a flawless firefly offers waffles to the scaffolding officer.
EOF
}
greek='Η γρήγορη καφέ αλεπού πηδά πάνω από τον τεμπέλη σκύλο στην Αθήνα.'
cyrillic='Съешь же ещё этих мягких французских булок да выпей чаю в Москве.'

prose() { # paragraphs
	for i in $(seq 1 "$1"); do
		paragraph "$i"
		echo
	done
}

# --- groff: ms macros, two columns, native PDF device and via PostScript.
if have groff; then
	{
		echo '.TL'
		echo 'Groff two-column report'
		echo '.2C'
		for i in $(seq 1 24); do
			echo '.PP'
			paragraph "$i"
		done
	} >groff.ms
	groff -ms -Tpdf groff.ms >groff.pdf 2>groff.log
	made groff-pdf groff.pdf
	# ~3,000 pages of the same prose, for throughput (the benchmarks of
	# pipeline/extract/pdftext make the same file when it is missing).
	paragraph N | awk 'BEGIN { print ".TL"; print "Groff two-column report"; print ".2C" }
		{ p = p $0 "\n" }
		END { for (i = 1; i <= 28800; i++) { t = p; sub(/N/, i, t); printf ".PP\n%s", t } }' >big.ms
	groff -ms -Tpdf big.ms >big-groff.pdf 2>>groff.log
	made groff-3000p big-groff.pdf
	if have ps2pdf; then
		groff -ms -Tps groff.ms >groff.ps 2>>groff.log && ps2pdf groff.ps groff-ps.pdf
		made groff-ps2pdf groff-ps.pdf
	else
		skip groff-ps2pdf "ps2pdf (ghostscript) is not installed"
	fi
else
	skip groff-pdf "groff is not installed"
	skip groff-3000p "groff is not installed"
	skip groff-ps2pdf "groff is not installed"
fi

# --- enscript + Ghostscript: plain text, landscape two-column pages, and a
# ~3,000-page document for throughput.
if have enscript && have ps2pdf; then
	prose 40 >prose.txt
	enscript -q -B -o enscript.ps prose.txt && ps2pdf enscript.ps enscript.pdf
	made enscript enscript.pdf
	enscript -q -B -r -2 -o rotated.ps prose.txt && ps2pdf rotated.ps rotated.pdf
	made enscript-landscape-2col rotated.pdf
	awk 'BEGIN { for (i = 1; i <= 210000; i++) printf "%06d the confidential workflow of office number %d is efficient and affluent\n", i, i % 97 }' >big.txt
	enscript -q -B -o big.ps big.txt && ps2pdf big.ps big.pdf
	made enscript-3000p big.pdf
else
	for n in enscript enscript-landscape-2col enscript-3000p; do
		skip "$n" "enscript or ps2pdf (ghostscript) is not installed"
	done
fi

# --- pdfTeX: ligatures and hyphenation are on by default; a narrow two
# column layout and a rotated last page.
if have pdflatex; then
	{
		echo '\documentclass[twocolumn]{article}'
		echo '\setlength{\columnsep}{2em}'
		echo '\begin{document}'
		echo '\title{Efficient workflows}\author{The office}\date{}\maketitle'
		prose 30
		echo '\onecolumn\pdfpageattr{/Rotate 90}'
		echo 'This page is rotated. The affluent office finished the confidential workflow.'
		echo '\end{document}'
	} >latex.tex
	pdflatex -interaction=batchmode latex.tex >latex.log 2>&1
	made pdflatex latex.pdf
else
	skip pdflatex "pdflatex (texlive-latex-base) is not installed"
fi

# HTML with columns, Greek and Cyrillic, for the office suite and browser.
{
	echo '<!doctype html><html><head><meta charset="utf-8"><title>Corpus</title>'
	echo '<style>body{font-family:"DejaVu Serif",serif} .cols{column-count:2}</style></head><body>'
	echo '<h1>Office workflow</h1><div class="cols">'
	for i in $(seq 1 12); do
		echo "<p>$(paragraph "$i")</p>"
	done
	echo "</div><h2>Ελληνικά</h2><p>$greek</p><h2>Русский</h2><p>$cyrillic</p>"
	echo "<p>$greek $cyrillic</p></body></html>"
} >page.html

if have libreoffice || have soffice; then
	lo=$(command -v libreoffice || command -v soffice)
	timeout 300 "$lo" --headless -env:UserInstallation=file://"$work"/lo --convert-to pdf --outdir lo page.html >lo.log 2>&1
	made libreoffice lo/page.pdf
else
	skip libreoffice "libreoffice (libreoffice-writer-nogui) is not installed"
fi

if have chromium; then
	timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
		--no-first-run --disable-component-update --disable-sync \
		--user-data-dir="$work/chrome" --no-pdf-header-footer \
		--print-to-pdf="$work/chrome.pdf" "file://$work/page.html" >chrome.log 2>&1
	made chromium chrome.pdf
else
	skip chromium "chromium is not installed"
fi

# --- qpdf: object streams, encryption without a user password, and an
# incremental update, all applied to the pdfTeX output (ligatures make
# wrong decryption or decoding visible).
base=$out/pdflatex.pdf
[ -s "$base" ] || base=$out/groff-pdf.pdf
variants="qpdf-objstm qpdf-rc4-40 qpdf-rc4-128 qpdf-aes-128 qpdf-aes-256 incremental"
if have qpdf && [ -s "$base" ]; then
	qpdf --object-streams=generate "$base" objstm.pdf
	made qpdf-objstm objstm.pdf
	qpdf --allow-weak-crypto --encrypt "" owner 40 -- "$base" rc4-40.pdf
	made qpdf-rc4-40 rc4-40.pdf
	qpdf --allow-weak-crypto --encrypt "" owner 128 --use-aes=n -- "$base" rc4-128.pdf
	made qpdf-rc4-128 rc4-128.pdf
	qpdf --encrypt "" owner 128 --use-aes=y -- "$base" aes-128.pdf
	made qpdf-aes-128 aes-128.pdf
	qpdf --encrypt "" owner 256 -- "$base" aes-256.pdf
	made qpdf-aes-256 aes-256.pdf

	# Incremental update: append a new /Info object and a cross-reference
	# section that points back (/Prev) to the original one.
	qpdf --object-streams=disable --qdf "$base" plain.pdf
	size=$(grep -a -o '/Size [0-9]*' plain.pdf | tail -1 | cut -d' ' -f2)
	root=$(grep -a -o '/Root [0-9]* [0-9]* R' plain.pdf | tail -1)
	prev=$(tail -c 64 plain.pdf | grep -a -A1 startxref | tail -1 | tr -d '\r\n')
	cp plain.pdf incremental.pdf
	off=$(stat -c %s incremental.pdf)
	printf '%d 0 obj\n<< /Title (Incremental update) /Producer (build.sh) >>\nendobj\n' "$size" >>incremental.pdf
	xref=$(stat -c %s incremental.pdf)
	printf 'xref\n%d 1\n%010d 00000 n \ntrailer\n<< /Size %d %s /Info %d 0 R /Prev %s >>\nstartxref\n%d\n%%%%EOF\n' \
		"$size" "$off" "$((size + 1))" "$root" "$size" "$prev" "$xref" >>incremental.pdf
	if qpdf --check incremental.pdf >/dev/null 2>&1; then
		made incremental incremental.pdf
	else
		skip incremental "the appended update does not pass qpdf --check"
	fi
else
	for n in $variants; do
		skip "$n" "qpdf is not installed or there is no base PDF"
	done
fi
