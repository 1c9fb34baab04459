package awsapi

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The test derives each binary's operations from source: in every package
// the binary links from this module (and the SDK's feature packages, such as
// the S3 upload manager, that call services on our behalf), any reference
// to a service's <Operation>Input type is a call of that operation, however
// it is made (direct, through an interface, a paginator or a waiter).
// Package granularity over-approximates: deployment helpers compiled into a
// driver package but never run by a function are listed in notRun.
//
// Services the SDK has no package for here are called through our own
// signed JSON clients; rawClients names each such package and the method
// every operation goes through, whose second argument is the operation's
// name as a string literal.

var services = map[string]string{
	"github.com/aws/aws-sdk-go-v2/service/dynamodb":       "dynamodb",
	"github.com/aws/aws-sdk-go-v2/service/eventbridge":    "events",
	"github.com/aws/aws-sdk-go-v2/service/lambda":         "lambda",
	"github.com/aws/aws-sdk-go-v2/service/s3":             "s3",
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager": "secretsmanager",
	"github.com/aws/aws-sdk-go-v2/service/sfn":            "states",
	"github.com/aws/aws-sdk-go-v2/service/sqs":            "sqs",
	"github.com/aws/aws-sdk-go-v2/service/ssm":            "ssm",
	"github.com/aws/aws-sdk-go-v2/service/transcribe":     "transcribe",
}

var rawClients = map[string]struct{ service, method string }{
	"github.com/docpipe/docpipe/pipeline/textract": {"textract", "call"},
}

// stepsLinkedNotCalled are operations of packages cmd/steps links whole
// but never runs: Textract's asynchronous PDF detection (OCR sends page
// images to DetectDocumentText).
var stepsLinkedNotCalled = []string{"textract:GetDocumentTextDetection", "textract:StartDocumentTextDetection"}

// notRun are operations of table/bucket/state machine set-up helpers that
// live in linked packages but are only called by tests and dev tooling.
var notRun = []string{
	"dynamodb:CreateTable", "dynamodb:DeleteTable", "dynamodb:DescribeTable", "dynamodb:UpdateTimeToLive",
	"dynamodb:DescribeTimeToLive", "s3:HeadBucket", "s3:CreateBucket", "s3:DeleteBucket", "s3:DeleteObjects", "s3:ListObjectVersions",
	"states:CreateStateMachine", "states:UpdateStateMachine", "states:ListStateMachines", "states:CreateActivity",
}

// ingestLinkedNotCalled are operations of packages cmd/ingest links whole
// (the sfn package's workers and executor, the blob store's listing, the
// audio engines the shared backend package chooses from) but whose calling
// functions the ingest path never runs.
var ingestLinkedNotCalled = []string{
	"states:StopExecution", "states:GetActivityTask", "states:SendTaskFailure", "states:SendTaskHeartbeat", "states:SendTaskSuccess",
	"dynamodb:DeleteItem", "s3:ListObjectsV2",
	"sqs:ChangeMessageVisibility", "sqs:DeleteMessage", "sqs:ReceiveMessage",
	"transcribe:GetTranscriptionJob", "transcribe:StartTranscriptionJob",
	"textract:DetectDocumentText", "textract:GetDocumentTextDetection", "textract:StartDocumentTextDetection",
}

// relayLinkedNotCalled are operations of packages cmd/relay links whole
// (the table driver's writes, the step handlers, blob store and audio
// engines behind the shared backend package) that delivering events never
// reaches.
var relayLinkedNotCalled = []string{
	"dynamodb:DeleteItem", "dynamodb:PutItem", "dynamodb:TransactWriteItems",
	"s3:AbortMultipartUpload", "s3:CompleteMultipartUpload", "s3:CreateMultipartUpload", "s3:DeleteObject",
	"s3:GetObject", "s3:HeadObject", "s3:ListObjectsV2", "s3:PutObject", "s3:UploadPart",
	"transcribe:GetTranscriptionJob", "transcribe:StartTranscriptionJob",
	"textract:DetectDocumentText", "textract:GetDocumentTextDetection", "textract:StartDocumentTextDetection",
}

type goPackage struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Module     *struct{ Path string }
}

func linkedPackages(t *testing.T, pkg string) []goPackage {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-json", pkg).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", pkg, err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	var pkgs []goPackage
	for dec.More() {
		var p goPackage
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		if p.Module == nil {
			continue
		}
		if p.Module.Path == "github.com/docpipe/docpipe" || strings.HasPrefix(p.ImportPath, "github.com/aws/aws-sdk-go-v2/feature/") {
			pkgs = append(pkgs, p)
		}
	}
	return pkgs
}

// operations scans packages for <svc>.<Op>Input references, and the raw
// clients for their calls.
func operations(t *testing.T, pkgs []goPackage) map[string][]string {
	t.Helper()
	found := map[string][]string{} // op → packages
	add := func(key, pkg string) {
		if !slices.Contains(found[key], pkg) {
			found[key] = append(found[key], pkg)
		}
	}
	fset := token.NewFileSet()
	for _, p := range pkgs {
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			if raw, ok := rawClients[p.ImportPath]; ok {
				ast.Inspect(f, func(n ast.Node) bool {
					call, ok := n.(*ast.CallExpr)
					if !ok || len(call.Args) < 2 {
						return true
					}
					sel, ok := call.Fun.(*ast.SelectorExpr)
					lit, isLit := call.Args[1].(*ast.BasicLit)
					if ok && isLit && sel.Sel.Name == raw.method && lit.Kind == token.STRING {
						op, _ := strconv.Unquote(lit.Value)
						add(raw.service+":"+op, p.ImportPath)
					}
					return true
				})
			}
			aliases := map[string]string{}
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				svc, ok := services[path]
				if !ok {
					continue
				}
				local := filepath.Base(path)
				if imp.Name != nil {
					local = imp.Name.Name
				}
				aliases[local] = svc
			}
			if len(aliases) == 0 {
				continue
			}
			ast.Inspect(f, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				id, ok := sel.X.(*ast.Ident)
				if !ok {
					return true
				}
				svc, ok := aliases[id.Name]
				if !ok {
					return true
				}
				if op, ok := strings.CutSuffix(sel.Sel.Name, "Input"); ok && op != "" && ast.IsExported(op) {
					add(svc+":"+op, p.ImportPath)
				}
				return true
			})
		}
	}
	return found
}

func checkBinary(t *testing.T, pkg string, listed []string) {
	pkgs := linkedPackages(t, pkg)
	found := operations(t, pkgs)
	if len(found) == 0 {
		t.Fatalf("%s: no AWS operations found; the scan is broken", pkg)
	}
	for op, where := range found {
		if slices.Contains(notRun, op) {
			continue
		}
		if !slices.Contains(listed, op) {
			t.Errorf("%s calls %s (in %v) but its list does not name it", pkg, op, where)
		}
	}
	for _, op := range listed {
		if _, ok := found[op]; !ok {
			t.Errorf("%s's list names %s, which no linked package calls: remove it", pkg, op)
		}
	}
}

func TestOperationLists(t *testing.T) {
	t.Parallel()
	// The Lambda and the worker are one binary; the worker alone calls the
	// activity API, from the sfn package's worker.
	checkBinary(t, "github.com/docpipe/docpipe/cmd/steps", append(append(slices.Clone(Worker), "states:DescribeExecution", "states:StartExecution", "states:StopExecution"), stepsLinkedNotCalled...))
	checkBinary(t, "github.com/docpipe/docpipe/cmd/ingest", append(slices.Clone(Ingest), ingestLinkedNotCalled...))
	checkBinary(t, "github.com/docpipe/docpipe/cmd/relay", append(slices.Clone(Relay), relayLinkedNotCalled...))
}

func TestIAMActions(t *testing.T) {
	t.Parallel()
	got := IAMActions([]string{"s3:HeadObject", "s3:GetObject", "dynamodb:TransactWriteItems", "states:StartExecution"})
	want := []string{"dynamodb:ConditionCheckItem", "dynamodb:DeleteItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "s3:GetObject", "states:StartExecution"}
	if !slices.Equal(got, want) {
		t.Errorf("IAMActions = %v, want %v", got, want)
	}
}
