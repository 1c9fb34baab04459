package backend

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/docpipe/docpipe/pipeline/ocr"
	"github.com/docpipe/docpipe/pipeline/textract"
)

// Values of EnvOCR.
const (
	OCRTesseract = "tesseract" // tesseract on the machine running the steps
	OCRTextract  = "textract"  // Amazon Textract's DetectDocumentText per page image
)

// AWSOCR chooses how step handlers on AWS read page images, from setting
// (the value of EnvOCR): OCRTextract sends each rendered page to Amazon
// Textract in cfg's region; OCRTesseract or "" runs tesseract, which
// reports itself missing where it is not installed (as on Lambda).
func AWSOCR(setting string, cfg aws.Config) (ocr.Engine, error) {
	switch setting {
	case OCRTextract:
		return &textract.Engine{Client: textract.New(cfg)}, nil
	case OCRTesseract, "":
		return ocr.NewTesseract(), nil
	}
	return nil, fmt.Errorf("%s=%q: want %s (Amazon Textract) or %s", EnvOCR, setting, OCRTextract, OCRTesseract)
}
