package textract

import (
	"context"
	"fmt"
	"os"

	"github.com/docpipe/docpipe/pipeline/ocr"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

// maxImageBytes is DetectDocumentText's limit on a document sent inline.
const maxImageBytes = 10 << 20

// Engine is an ocr.Engine that reads each page image with
// DetectDocumentText: pages are rendered by pdftoppm as for tesseract,
// then recognised by Textract instead of on this machine.
type Engine struct {
	Client *Client
}

var _ ocr.Engine = (*Engine)(nil)

// Name is "textract".
func (e *Engine) Name() string { return "textract" }

// Available is always true: whether the service answers is learnt per
// page, and a page it refuses fails with the service's reason.
func (e *Engine) Available() (bool, string) { return true, "" }

// Recognize sends the image and returns its lines in reading order.
func (e *Engine) Recognize(ctx context.Context, imagePath string) (string, error) {
	img, err := os.ReadFile(imagePath)
	if err != nil {
		return "", err
	}
	if len(img) > maxImageBytes {
		return "", &steperr.StageFailedError{Reason: fmt.Sprintf("textract: the page image is %.1f MB, over DetectDocumentText's 10 MB", float64(len(img))/(1<<20))}
	}
	return e.Client.DetectText(ctx, img)
}
