package backend

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
)

func TestAWSOCRChoosesEngine(t *testing.T) {
	cfg := aws.Config{Region: "eu-west-1"}
	for setting, want := range map[string]string{"": "tesseract", OCRTesseract: "tesseract", OCRTextract: "textract"} {
		e, err := AWSOCR(setting, cfg)
		if err != nil || e.Name() != want {
			t.Errorf("%s=%q: engine %v, %v; want %s", EnvOCR, setting, e, err, want)
		}
	}
	if _, err := AWSOCR("rekognition", cfg); err == nil {
		t.Errorf("%s=rekognition: no error", EnvOCR)
	}
}
