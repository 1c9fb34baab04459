package main

import (
	"fmt"
	"strings"

	"github.com/docpipe/docpipe/pipeline/steperr"
)

// permanentInputErrors are the step errors that describe the input file
// itself: running the same bytes again fails the same way. Their recorded
// messages start with the error type's own prefix, so the prefix is taken
// from the type rather than written out again.
var permanentInputErrors = []struct {
	name   string
	prefix string
}{
	{steperr.NameInvalidDocument, (&steperr.InvalidDocumentError{}).Error()},
	{steperr.NameUnsupportedFormat, (&steperr.UnsupportedFormatError{}).Error()},
	{steperr.NameTooLarge, (&steperr.TooLargeError{}).Error()},
	{steperr.NamePasswordProtected, (&steperr.PasswordProtectedError{}).Error()},
}

// permanentInputError returns the ASL name of a recorded workflow error
// when it is a problem of the input file, and "" otherwise.
func permanentInputError(msg string) string {
	for _, e := range permanentInputErrors {
		if strings.HasPrefix(msg, e.prefix) {
			return e.name
		}
	}
	return ""
}

// failureAdvice says what to do about a failed document. A re-run helps
// only where something outside the file failed (a transient fault, a
// failed segment, a missing tool, a timeout); for a problem of the file
// itself it says how to fix the file instead.
func failureAdvice(home, workflowID, msg string) string {
	switch permanentInputError(msg) {
	case steperr.NameInvalidDocument:
		if strings.Contains(msg, "empty") {
			return "the file is empty: replace it and run again"
		}
		return "the file is damaged or not what its format claims: replace it with a good copy and run again"
	case steperr.NamePasswordProtected:
		return "the file needs a password: decrypt it first (qpdf --decrypt for a PDF; save a DOCX without a password) and run again"
	case steperr.NameUnsupportedFormat:
		return "docpipe cannot read this format: convert it to PDF, DOCX, HTML, Markdown, text or an image and run again"
	case steperr.NameTooLarge:
		return "the file is over a size limit: split it into smaller files and run again"
	}
	return fmt.Sprintf("after fixing the cause: docpipe rerun --home %s %s", home, workflowID)
}
