package awscount_test

import (
	"testing"

	"github.com/docpipe/docpipe/pipeline/driver/awstest"
)

func TestMain(m *testing.M) { awstest.MainForSuite(m) }
