//go:build integration

package interp

import (
	"testing"

	"github.com/docpipe/docpipe/pipeline/driver/awstest"
)

func TestMain(m *testing.M) { awstest.MainForSuite(m) }
