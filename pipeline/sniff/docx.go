package sniff

import (
	"context"
	"encoding/xml"
	"fmt"
	"path"
	"strings"

	"github.com/docpipe/docpipe/pipeline/steperr"
)

// maxManifestBytes bounds the small XML parts read whole.
const maxManifestBytes = 1 << 20

const officeDocumentRel = "/officeDocument"

// DOCXMainPart returns the name of a DOCX archive's main document part
// (word/document.xml in practice), found through the package relationships
// and checked against [Content_Types].xml. Other zip-based formats are
// UnsupportedFormatError with their name; a DOCX missing its body is
// InvalidDocumentError.
func DOCXMainPart(ctx context.Context, a *Archive) (string, error) {
	main := ""
	if a.Has("_rels/.rels") {
		b, err := a.ReadAll(ctx, "_rels/.rels", maxManifestBytes)
		if err != nil {
			return "", err
		}
		var rels struct {
			Rel []struct {
				Type   string `xml:"Type,attr"`
				Target string `xml:"Target,attr"`
			} `xml:"Relationship"`
		}
		if err := xml.Unmarshal(b, &rels); err != nil {
			return "", &steperr.InvalidDocumentError{Reason: fmt.Sprintf("_rels/.rels is not valid XML: %v", err)}
		}
		for _, r := range rels.Rel {
			if strings.HasSuffix(r.Type, officeDocumentRel) {
				main = strings.TrimPrefix(path.Clean("/"+r.Target), "/")
				break
			}
		}
	}
	if main == "" && a.Has("word/document.xml") {
		main = "word/document.xml"
	}
	if main == "" {
		mimetype := ""
		if a.Has("mimetype") {
			b, err := a.ReadAll(ctx, "mimetype", 256)
			if err == nil {
				mimetype = string(b)
			}
		}
		if kind := otherZipKind(a.HasPrefix, mimetype); kind != "" {
			return "", &steperr.UnsupportedFormatError{Reason: kind}
		}
		return "", &steperr.UnsupportedFormatError{Reason: "zip archive that is not a DOCX document (no word/document.xml)"}
	}
	ct, err := contentType(ctx, a, main)
	if err != nil {
		return "", err
	}
	switch {
	case ct == "" && strings.HasPrefix(main, "word/"),
		strings.Contains(ct, "wordprocessingml"),
		strings.Contains(ct, "ms-word."):
	case strings.Contains(ct, "spreadsheetml"), strings.Contains(ct, "ms-excel"):
		return "", &steperr.UnsupportedFormatError{Reason: "XLSX spreadsheet (only DOCX is supported among Office formats)"}
	case strings.Contains(ct, "presentationml"), strings.Contains(ct, "ms-powerpoint"):
		return "", &steperr.UnsupportedFormatError{Reason: "PPTX presentation (only DOCX is supported among Office formats)"}
	default:
		return "", &steperr.UnsupportedFormatError{Reason: fmt.Sprintf("Office package whose main part is %q (%s), not a DOCX document", main, ct)}
	}
	if !a.Has(main) {
		return "", &steperr.InvalidDocumentError{Reason: fmt.Sprintf("DOCX main part %q is missing", main)}
	}
	return main, nil
}

// HasPrefix reports whether any entry name starts with prefix.
func (a *Archive) HasPrefix(prefix string) bool {
	for name := range a.files {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return false
}

// contentType looks the part up in [Content_Types].xml: an Override for
// the part, else the Default for its extension; "" when the archive has no
// content-types part.
func contentType(ctx context.Context, a *Archive, part string) (string, error) {
	const name = "[Content_Types].xml"
	if !a.Has(name) {
		return "", nil
	}
	b, err := a.ReadAll(ctx, name, maxManifestBytes)
	if err != nil {
		return "", err
	}
	var types struct {
		Defaults []struct {
			Extension   string `xml:"Extension,attr"`
			ContentType string `xml:"ContentType,attr"`
		} `xml:"Default"`
		Overrides []struct {
			PartName    string `xml:"PartName,attr"`
			ContentType string `xml:"ContentType,attr"`
		} `xml:"Override"`
	}
	if err := xml.Unmarshal(b, &types); err != nil {
		return "", &steperr.InvalidDocumentError{Reason: fmt.Sprintf("%s is not valid XML: %v", name, err)}
	}
	for _, o := range types.Overrides {
		if strings.EqualFold(strings.TrimPrefix(o.PartName, "/"), part) {
			return o.ContentType, nil
		}
	}
	ext := strings.TrimPrefix(path.Ext(part), ".")
	for _, d := range types.Defaults {
		if strings.EqualFold(d.Extension, ext) {
			if d.ContentType == "application/xml" { // the generic default says nothing
				return "", nil
			}
			return d.ContentType, nil
		}
	}
	return "", nil
}
