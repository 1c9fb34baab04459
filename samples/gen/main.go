// Command gen writes a large, realistic multi-page text PDF for tests and
// benchmarks of PDF extraction:
//
//	go run ./samples/gen -pages 3000 -o big.pdf
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/docpipe/docpipe/samples/gen/pdfgen"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	pages := fs.Int("pages", 100, "number of pages")
	out := fs.String("o", "", "output file (default stdout)")
	seed := fs.Uint64("seed", 1, "seed; the same seed gives the same bytes")
	images := fs.Int("images", 0, "number of image-only pages (no text layer), spread evenly")
	encrypt := fs.String("encrypt", "", "encrypt with the standard security handler: rc4-40, rc4-128 or aes-128")
	password := fs.String("user-password", "", "user password for -encrypt (empty: opens without one)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	opts := pdfgen.Options{Pages: *pages, Seed: *seed, ImagePages: *images}
	if *encrypt != "" {
		m, ok := map[string]pdfgen.Method{"rc4-40": pdfgen.RC4_40, "rc4-128": pdfgen.RC4_128, "aes-128": pdfgen.AES_128}[*encrypt]
		if !ok {
			return fmt.Errorf("unknown -encrypt %q (want rc4-40, rc4-128 or aes-128)", *encrypt)
		}
		opts.Encrypt = &pdfgen.Encryption{Method: m, UserPassword: *password}
	}
	if *out == "" {
		return pdfgen.Write(os.Stdout, opts)
	}
	return pdfgen.WriteFile(*out, opts)
}
