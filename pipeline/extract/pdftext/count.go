package pdftext

import (
	"context"
	"os"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// countInProcessMaxBytes is the largest file whose page count is read in
// process rather than by pdfinfo. Reading a small PDF's count here takes
// about a millisecond, pdfinfo's start-up alone six; pdfcpu reads every
// object of the file, so past a few hundred KiB pdfinfo is the cheaper.
const countInProcessMaxBytes = 256 << 10

// claimedPages returns the page count a small PDF's page tree claims (its
// /Count, which is what pdfinfo reports), read with pdfcpu. pdfcpu, unlike
// the pure-Go extractor's reader, keeps the cross-reference table in a map
// and honours ctx, so a hostile table costs no more than its bytes. ok is
// false when the file is larger than countInProcessMaxBytes, cannot be read
// (damaged, needs a password), keeps its catalog or page tree in an object
// stream or claims an impossible count: pdfinfo then has the final word and
// the reason a failure is given in.
func claimedPages(ctx context.Context, path string) (n int, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Size() > countInProcessMaxBytes {
		return 0, false
	}
	defer func() {
		if recover() != nil {
			n, ok = 0, false
		}
	}()
	disableConfigDir()
	conf := model.NewDefaultConfiguration()
	conf.ValidationMode = model.ValidationRelaxed
	conf.Offline = true
	doc, err := pdfcpu.ReadWithContext(ctx, f, conf)
	if err != nil || doc.Root == nil {
		return 0, false
	}
	// Reading an object out of an object stream inflates the stream up to
	// it, which a small file can make hundreds of megabytes: such files
	// are counted by pdfinfo, under its memory limit.
	if !plainObject(doc, *doc.Root) {
		return 0, false
	}
	root, err := doc.Catalog()
	if err != nil || !plainObject(doc, root["Pages"]) {
		return 0, false
	}
	tree, err := doc.DereferenceDict(root["Pages"])
	if err != nil || tree == nil {
		return 0, false
	}
	count := tree.IntEntry("Count")
	// Every page is an object of its own: a count past the number of
	// objects is a lie that poppler handles (and words) its own way.
	if count == nil || *count < 1 || *count > len(doc.Table) {
		return 0, false
	}
	return *count, true
}

// plainObject reports whether o is a direct object or refers to one stored
// on its own in the file, not in an object stream.
func plainObject(doc *model.Context, o types.Object) bool {
	ref, isRef := o.(types.IndirectRef)
	if !isRef {
		return o != nil
	}
	e, found := doc.Table[ref.ObjectNumber.Value()]
	return found && e != nil && !e.Free && e.ObjectStream == nil
}
