// Package terraform_test checks the Terraform module against the code it
// deploys, without providers (CI cannot download them): the table against
// package table, each function's IAM policy against cmd/internal/awsapi,
// the environment against cmd/internal/backend, the state machine against
// the committed generated definition, plus module conventions and
// `terraform fmt`.
package terraform_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/docpipe/docpipe/pipeline/table"
)

const (
	modulePath     = "modules/docpipe"
	definitionFile = "statemachine/definitions/docpipe.lambda.asl.json"
)

// functions maps each Lambda function of the module to the binary it runs
// and that binary's list in cmd/internal/awsapi (as awsapidump names it).
// entry is the function of the binary's package where its Lambda mode
// starts (cmd/steps also has a worker mode, which reads other settings).
var functions = map[string]struct{ cmd, list, entry string }{
	"steps":  {cmd: "cmd/steps", list: "steps", entry: "runLambda"},
	"ingest": {cmd: "cmd/ingest", list: "ingest", entry: "main"},
	"relay":  {cmd: "cmd/relay", list: "relay", entry: "main"},
}

// Actions the Lambda service takes with a function's role on its behalf,
// which its code never calls: an event source mapping reading the table's
// stream, and sending an asynchronous invocation that failed to the
// dead-letter queue.
var functionServiceActions = map[string][]string{
	"ingest": {"sqs:SendMessage"},
	"relay":  {"dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator", "sqs:SendMessage"},
}

// Actions a function holds only in some configurations, which the services
// its code calls use with its role: decrypting the webhook secret with its
// customer managed key.
var functionOptionalActions = map[string][]string{
	"relay": {"kms:Decrypt"},
}

// Environment variables a binary reads for local runs only, which the
// module must not set: the webhook secret itself would sit in the
// function's configuration and in Terraform state.
var localOnlyEnv = map[string][]string{
	"relay": {"DOCPIPE_WEBHOOK_SECRET"},
}

// Actions a function may hold beyond its code's list: writing its own logs,
// and X-Ray segments when tracing is active.
var functionExtraActions = []string{
	"logs:CreateLogStream", "logs:PutLogEvents",
	"xray:PutTelemetryRecords", "xray:PutTraceSegments",
}

// Step Functions' own actions: its integrations come from the definition
// (stateMachineActions), plus CloudWatch Logs delivery and X-Ray.
var stateMachineExtraActions = []string{
	"logs:CreateLogDelivery", "logs:DeleteLogDelivery", "logs:DescribeLogGroups", "logs:DescribeResourcePolicies",
	"logs:GetLogDelivery", "logs:ListLogDeliveries", "logs:PutResourcePolicy", "logs:UpdateLogDelivery",
	"xray:GetSamplingRules", "xray:GetSamplingTargets", "xray:PutTelemetryRecords", "xray:PutTraceSegments",
}

// Actions that support no resource-level permissions, so "*" resources are
// allowed with them (and only with them): log delivery, X-Ray, Amazon
// Transcribe's batch jobs and Amazon Textract's text detection.
var starResourceActions = append(slices.Clone(stateMachineExtraActions),
	"transcribe:GetTranscriptionJob", "transcribe:StartTranscriptionJob", "textract:DetectDocumentText")

func load(t *testing.T) (map[string]*tfModule, *tfModule) {
	t.Helper()
	mods := loadModules(t, ".")
	m, ok := mods[modulePath]
	if !ok {
		t.Fatalf("no module at %s", modulePath)
	}
	return mods, m
}

func TestEveryFileParses(t *testing.T) {
	t.Parallel()
	mods, _ := load(t)
	for _, want := range []string{modulePath, "examples/complete", "examples/localstack"} {
		if _, ok := mods[want]; !ok {
			t.Errorf("no .tf files in %s", want)
		}
	}
	for dir, m := range mods {
		if strings.HasPrefix(dir, "modules/") {
			for _, f := range []string{"main.tf", "variables.tf", "outputs.tf", "versions.tf"} {
				if _, ok := m.files[f]; !ok {
					t.Errorf("%s has no %s", dir, f)
				}
			}
		}
	}
}

func TestVariablesAndOutputsFollowConventions(t *testing.T) {
	t.Parallel()
	mods, _ := load(t)
	for dir, m := range mods {
		for name, v := range m.variables {
			for _, a := range []string{"type", "description"} {
				if _, ok := v.Body.Attributes[a]; !ok {
					t.Errorf("%s: variable %s has no %s", dir, name, a)
				}
			}
		}
		for name, o := range m.outputs {
			if !strings.HasSuffix(name, "_arn") && !strings.HasSuffix(name, "_name") {
				t.Errorf("%s: output %s is named neither *_arn nor *_name", dir, name)
			}
			if _, ok := o.Body.Attributes["description"]; !ok {
				t.Errorf("%s: output %s has no description", dir, name)
			}
		}
	}
}

func TestVersionsArePinned(t *testing.T) {
	t.Parallel()
	mods, _ := load(t)
	for dir, m := range mods {
		body, ok := m.files["versions.tf"]
		if !ok {
			t.Errorf("%s has no versions.tf", dir)
			continue
		}
		var tf *hclsyntax.Block
		for _, b := range body.Blocks {
			if b.Type == "terraform" {
				tf = b
			}
		}
		if tf == nil {
			t.Errorf("%s/versions.tf has no terraform block", dir)
			continue
		}
		if _, ok := tf.Body.Attributes["required_version"]; !ok {
			t.Errorf("%s: no required_version", dir)
		}
		aws := objectKeys(t, attr(t, child(t, tf, "required_providers"), "aws"))
		if src := m.str(t, aws["source"]); src != "hashicorp/aws" {
			t.Errorf("%s: aws provider source %q", dir, src)
		}
		if v := m.str(t, aws["version"]); !strings.HasPrefix(v, "~> 5.") {
			t.Errorf("%s: aws provider version %q, want ~> 5.x", dir, v)
		}
	}
}

// TestReferencesResolve is the part of `terraform validate` that needs no
// provider: every var, local, data source, resource and module referred to
// exists, and every module call sets only the module's variables and all of
// its required ones.
func TestReferencesResolve(t *testing.T) {
	t.Parallel()
	mods, _ := load(t)
	for dir, m := range mods {
		for _, body := range m.files {
			checkRefs := func(a *hclsyntax.Attribute) {
				for _, tr := range a.Expr.Variables() {
					name := refName(tr)
					root, rest, _ := strings.Cut(name, ".")
					var ok bool
					switch {
					case root == "var":
						_, ok = m.variables[rest]
					case root == "local":
						_, ok = m.locals[rest]
					case root == "data":
						_, ok = m.data[rest]
					case root == "module":
						_, ok = m.modules[rest]
					case root == "path", root == "count", root == "each", root == "self", root == "terraform", m.dynamics[root]:
						ok = true
					default:
						_, ok = m.resources[name]
					}
					if !ok {
						t.Errorf("%s: %s: %s is not declared", dir, a.SrcRange, name)
					}
				}
			}
			for _, b := range body.Blocks {
				switch b.Type {
				case "terraform":
					continue // provider requirements, not expressions
				case "variable":
					// type is a type expression, not references.
					for name, a := range b.Body.Attributes {
						if name != "type" {
							checkRefs(a)
						}
					}
					for _, c := range b.Body.Blocks {
						walkAttributes(c.Body, checkRefs)
					}
				default:
					walkAttributes(b.Body, checkRefs)
				}
			}
		}
		for name, call := range m.modules {
			src := filepath.Join(m.dir, m.str(t, attr(t, call, "source")))
			var callee *tfModule
			for _, other := range mods {
				if other.dir == filepath.Clean(src) {
					callee = other
				}
			}
			if callee == nil {
				t.Errorf("%s: module %s: source %s is not a module here", dir, name, src)
				continue
			}
			for arg := range call.Body.Attributes {
				if _, ok := callee.variables[arg]; !ok && arg != "source" {
					t.Errorf("%s: module %s sets %s, which it does not declare", dir, name, arg)
				}
			}
			for v, b := range callee.variables {
				if _, hasDefault := b.Body.Attributes["default"]; !hasDefault {
					if _, set := call.Body.Attributes[v]; !set {
						t.Errorf("%s: module %s leaves required variable %s unset", dir, name, v)
					}
				}
			}
		}
	}
}

func TestTableMatchesCode(t *testing.T) {
	t.Parallel()
	_, m := load(t)
	tbl, ok := m.resources["aws_dynamodb_table.this"]
	if !ok {
		t.Fatal("no aws_dynamodb_table.this")
	}
	want := map[string]string{
		"hash_key": table.AttrPK, "range_key": table.AttrSK,
		"billing_mode": "PAY_PER_REQUEST", "stream_view_type": "NEW_AND_OLD_IMAGES",
	}
	for a, v := range want {
		if got := m.str(t, attr(t, tbl, a)); got != v {
			t.Errorf("%s = %q, want %q", a, got, v)
		}
	}
	mustBeTrue := func(what string, expr hclsyntax.Expression) {
		if v := m.eval(t, expr); !v.RawEquals(cty.True) {
			t.Errorf("%s = %#v, want true (by default)", what, v)
		}
	}
	mustBeTrue("stream_enabled", attr(t, tbl, "stream_enabled"))

	attrs := map[string]string{}
	gsis := map[string][2]string{}
	for _, b := range tbl.Body.Blocks {
		switch b.Type {
		case "attribute":
			attrs[m.str(t, attr(t, b, "name"))] = m.str(t, attr(t, b, "type"))
		case "global_secondary_index":
			name := m.str(t, attr(t, b, "name"))
			gsis[name] = [2]string{m.str(t, attr(t, b, "hash_key")), m.str(t, attr(t, b, "range_key"))}
			// ALL, as dynamotable.CreateTable creates it for development and
			// tests: readers of either index use whole items.
			if p := m.str(t, attr(t, b, "projection_type")); p != "ALL" {
				t.Errorf("index %s projection %s, want ALL", name, p)
			}
		case "local_secondary_index":
			t.Errorf("local secondary index %v: the code uses none", b.Labels)
		}
	}
	wantAttrs := map[string]string{}
	for _, a := range []string{table.AttrPK, table.AttrSK, table.AttrGSI1PK, table.AttrGSI1SK, table.AttrGSI2PK, table.AttrGSI2SK} {
		wantAttrs[a] = "S"
	}
	if !mapsEqual(attrs, wantAttrs) {
		t.Errorf("attributes = %v, want %v", attrs, wantAttrs)
	}
	wantGSIs := map[string][2]string{
		table.IndexGSI1: {table.AttrGSI1PK, table.AttrGSI1SK},
		table.IndexGSI2: {table.AttrGSI2PK, table.AttrGSI2SK},
	}
	if !mapsEqual(gsis, wantGSIs) {
		t.Errorf("indexes = %v, want %v", gsis, wantGSIs)
	}

	ttl := child(t, tbl, "ttl")
	if got := m.str(t, attr(t, ttl, "attribute_name")); got != table.AttrTTL {
		t.Errorf("ttl attribute %q, want %q", got, table.AttrTTL)
	}
	mustBeTrue("ttl.enabled", attr(t, ttl, "enabled"))
	mustBeTrue("point_in_time_recovery.enabled", attr(t, child(t, tbl, "point_in_time_recovery"), "enabled"))
	sse := child(t, tbl, "server_side_encryption")
	mustBeTrue("server_side_encryption.enabled", attr(t, sse, "enabled"))
	if refs := m.refs(attr(t, sse, "kms_key_arn")); !refs["var.table_kms_key_arn"] {
		t.Errorf("server_side_encryption.kms_key_arn does not use var.table_kms_key_arn")
	}
}

func mapsEqual[K comparable, V comparable](a, b map[K]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestBucketIsLockedDown(t *testing.T) {
	t.Parallel()
	_, m := load(t)
	for _, r := range []string{
		"aws_s3_bucket.this", "aws_s3_bucket_versioning.this", "aws_s3_bucket_server_side_encryption_configuration.this",
		"aws_s3_bucket_public_access_block.this", "aws_s3_bucket_policy.this", "aws_s3_bucket_lifecycle_configuration.this",
		"aws_s3_bucket_notification.this",
	} {
		if _, ok := m.resources[r]; !ok {
			t.Errorf("no %s", r)
		}
	}
	if t.Failed() {
		return
	}
	if s := m.str(t, attr(t, child(t, m.resources["aws_s3_bucket_versioning.this"], "versioning_configuration"), "status")); s != "Enabled" {
		t.Errorf("versioning %s", s)
	}
	pab := m.resources["aws_s3_bucket_public_access_block.this"]
	for _, a := range []string{"block_public_acls", "block_public_policy", "ignore_public_acls", "restrict_public_buckets"} {
		if v := m.eval(t, attr(t, pab, a)); !v.RawEquals(cty.True) {
			t.Errorf("public access block %s = %#v", a, v)
		}
	}
	if v := m.eval(t, attr(t, m.resources["aws_s3_bucket_notification.this"], "eventbridge")); !v.RawEquals(cty.True) {
		t.Errorf("bucket notification eventbridge = %#v, want true", v)
	}

	// The bucket policy denies every request not made over TLS.
	doc := policyDocument(t, m, m.resources["aws_s3_bucket_policy.this"], "policy")
	tls := false
	for _, st := range doc {
		if st.effect != "Deny" || !slices.Contains(st.actions, "s3:*") {
			continue
		}
		for _, c := range st.block.Body.Blocks {
			if c.Type == "condition" && m.str(t, attr(t, c, "variable")) == "aws:SecureTransport" &&
				m.str(t, attr(t, c, "test")) == "Bool" && slices.Equal(m.strs(t, attr(t, c, "values")), []string{"false"}) {
				tls = true
			}
		}
	}
	if !tls {
		t.Error("the bucket policy does not deny aws:SecureTransport = false")
	}

	// Lifecycle: incomplete multipart uploads are aborted and noncurrent
	// versions expire, bucket-wide.
	var abort, noncurrent bool
	walkBlocks(m.resources["aws_s3_bucket_lifecycle_configuration.this"].Body, func(b *hclsyntax.Block) {
		abort = abort || b.Type == "abort_incomplete_multipart_upload"
		noncurrent = noncurrent || b.Type == "noncurrent_version_expiration"
	})
	if !abort || !noncurrent {
		t.Errorf("lifecycle: abort_incomplete_multipart_upload %v, noncurrent_version_expiration %v; want both", abort, noncurrent)
	}
}

// statement is one statement of an aws_iam_policy_document.
type statement struct {
	block     *hclsyntax.Block
	effect    string
	actions   []string
	resources hclsyntax.Expression
	dynamic   bool // inside a dynamic block: present in some configurations
}

// statements reads a policy document's statements, dynamic ones included.
func statements(t *testing.T, m *tfModule, doc *hclsyntax.Block) []statement {
	t.Helper()
	var out []statement
	add := func(b *hclsyntax.Block, dynamic bool) {
		if _, ok := b.Body.Attributes["not_actions"]; ok {
			t.Errorf("%s: not_actions grants everything else; list actions", b.DefRange())
		}
		st := statement{block: b, effect: "Allow", dynamic: dynamic}
		if e, ok := b.Body.Attributes["effect"]; ok {
			st.effect = m.str(t, e.Expr)
		}
		st.actions = m.strs(t, attr(t, b, "actions"))
		if r, ok := b.Body.Attributes["resources"]; ok {
			st.resources = r.Expr
		}
		out = append(out, st)
	}
	for _, b := range doc.Body.Blocks {
		switch {
		case b.Type == "statement":
			add(b, false)
		case b.Type == "dynamic" && b.Labels[0] == "statement":
			add(child(t, b, "content"), true)
		}
	}
	return out
}

// policyDocument follows a policy attribute to its policy document: every
// policy is written as data.aws_iam_policy_document so that it can be read
// here.
func policyDocument(t *testing.T, m *tfModule, res *hclsyntax.Block, attrName string) []statement {
	t.Helper()
	ref := traversalTo(t, attr(t, res, attrName))
	name, ok := strings.CutPrefix(ref, "data.aws_iam_policy_document.")
	if !ok {
		t.Fatalf("%s: %s is %s, want data.aws_iam_policy_document.<name>.json", res.DefRange(), attrName, ref)
	}
	doc, ok := m.data["aws_iam_policy_document."+name]
	if !ok {
		t.Fatalf("no data.aws_iam_policy_document.%s", name)
	}
	return statements(t, m, doc)
}

// rolePolicy returns the statements of the inline policies of a role;
// managed policy attachments would escape this check and are refused.
func rolePolicy(t *testing.T, m *tfModule, role string) []statement {
	t.Helper()
	var out []statement
	for key, res := range m.resources {
		typ, _, _ := strings.Cut(key, ".")
		switch typ {
		case "aws_iam_role_policy_attachment", "aws_iam_policy_attachment":
			t.Errorf("%s: managed policies are not checked against the code; use an inline policy", key)
		case "aws_iam_role_policy":
			if traversalTo(t, attr(t, res, "role")) == role {
				out = append(out, policyDocument(t, m, res, "policy")...)
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("role %s has no inline policy", role)
	}
	return out
}

func actionsOf(sts []statement) []string {
	var out []string
	for _, st := range sts {
		if st.effect == "Allow" {
			out = append(out, st.actions...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// awsapiActions runs testdata/awsapidump as a package under cmd/ (an
// overlay adds it there for this build only; nothing is written to the
// source tree) to get the IAM actions of each binary's list.
func awsapiActions(t *testing.T) map[string][]string {
	t.Helper()
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	src, err := filepath.Abs("testdata/awsapidump/main.go")
	if err != nil {
		t.Fatal(err)
	}
	pkgDir := filepath.Join(root, "cmd", "internal", "awsapidump")
	if _, err := os.Stat(pkgDir); err == nil {
		t.Fatalf("%s exists; the overlay needs that path free", pkgDir)
	}
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(pkgDir, "main.go"): src}})
	if err != nil {
		t.Fatal(err)
	}
	ovPath := filepath.Join(t.TempDir(), "overlay.json")
	if err := os.WriteFile(ovPath, overlay, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "run", "-overlay", ovPath, "./cmd/internal/awsapidump")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("awsapidump: %v\n%s", err, stderr.String())
	}
	var lists map[string][]string
	if err := json.Unmarshal(out, &lists); err != nil {
		t.Fatalf("awsapidump output %q: %v", out, err)
	}
	return lists
}

// resourceKinds says what a statement's resources must refer to, by the
// service of its actions.
var resourceKinds = map[string][]string{
	"dynamodb": {"aws_dynamodb_table.this"},
	"s3":       {"aws_s3_bucket.this"},
	"logs":     {"aws_cloudwatch_log_group."},
	"lambda":   {"aws_lambda_function.steps", "local.pipeline_lambda_arns"},
	"states":   {"local.state_machine_arn", "local.execution_arn_prefix"},
	"events":   {"local.event_bus_arn"},
	"sqs":      {"aws_sqs_queue.dead_letter"},
	// The webhook's signing secret and its key: exactly what the variables
	// name.
	"secretsmanager": {"var.webhook_secret_arn"},
	"ssm":            {"var.webhook_secret_arn"},
	"kms":            {"var.webhook_secret_kms_key_arn"},
}

// checkResources holds each statement to the resources of its service and
// allows "*" only with actions that have no resource-level permissions.
func checkResources(t *testing.T, m *tfModule, who string, sts []statement) {
	t.Helper()
	for _, st := range sts {
		if st.resources == nil {
			t.Errorf("%s: statement %s has no resources", who, st.block.DefRange())
			continue
		}
		star := slices.Contains(m.strsOrNil(st.resources), "*")
		for _, a := range st.actions {
			if star {
				if !slices.Contains(starResourceActions, a) {
					t.Errorf("%s: %s on resource \"*\"; it supports resource-level permissions", who, a)
				}
				continue
			}
			svc, _, _ := strings.Cut(a, ":")
			kinds, ok := resourceKinds[svc]
			if !ok {
				t.Errorf("%s: no rule for the resources of %s", who, a)
				continue
			}
			refs := m.refs(st.resources)
			found := false
			for r := range refs {
				for _, k := range kinds {
					found = found || strings.HasPrefix(r, k)
				}
			}
			if !found {
				t.Errorf("%s: %s applies to %v, want one of %v", who, a, sortedKeys(refs), kinds)
			}
		}
	}
}

// strsOrNil evaluates a list that may hold unknown ARNs and returns its
// known strings.
func (m *tfModule) strsOrNil(expr hclsyntax.Expression) []string {
	v, diags := expr.Value(m.ctx)
	if diags.HasErrors() || !v.IsKnown() || v.IsNull() || !v.CanIterateElements() {
		return nil
	}
	var out []string
	for it := v.ElementIterator(); it.Next(); {
		_, e := it.Element()
		if e.IsKnown() && !e.IsNull() && e.Type().Equals(cty.String) {
			out = append(out, e.AsString())
		}
	}
	return out
}

func TestFunctionPoliciesMatchCode(t *testing.T) {
	t.Parallel()
	_, m := load(t)
	lists := awsapiActions(t)
	for key := range m.resources {
		if name, ok := strings.CutPrefix(key, "aws_lambda_function."); ok {
			if _, known := functions[name]; !known {
				t.Errorf("function %s is not mapped to its binary's awsapi list", name)
			}
		}
	}
	for name, fn := range functions {
		t.Run(name, func(t *testing.T) {
			res, ok := m.resources["aws_lambda_function."+name]
			if !ok {
				t.Fatalf("no aws_lambda_function.%s", name)
			}
			code, ok := lists[fn.list]
			if !ok || len(code) == 0 {
				t.Fatalf("awsapi has no actions for %s", fn.list)
			}
			role := strings.TrimSuffix(traversalTo(t, attr(t, res, "role")), ".arn")
			sts := rolePolicy(t, m, role)
			got := actionsOf(sts)
			if missing := setDiff(code, got); len(missing) > 0 {
				t.Errorf("%s's policy lacks %v, which %s calls (cmd/internal/awsapi)", name, missing, fn.cmd)
			}
			if missing := setDiff(functionServiceActions[name], got); len(missing) > 0 {
				t.Errorf("%s's policy lacks %v, which the Lambda service needs on its behalf", name, missing)
			}
			if extra := setDiff(setDiff(setDiff(setDiff(got, code), functionExtraActions), functionServiceActions[name]), functionOptionalActions[name]); len(extra) > 0 {
				t.Errorf("%s's policy grants %v, which %s does not call (cmd/internal/awsapi)", name, extra, fn.cmd)
			}
			for _, a := range []string{"logs:CreateLogStream", "logs:PutLogEvents"} {
				if !slices.Contains(got, a) {
					t.Errorf("%s cannot write its logs: no %s", name, a)
				}
			}
			checkResources(t, m, name, sts)

			for _, want := range []string{"runtime", "handler"} {
				if _, ok := res.Body.Attributes[want]; !ok {
					t.Errorf("%s: no %s", name, want)
				}
			}
			if m.str(t, attr(t, res, "runtime")) != "provided.al2023" || m.str(t, attr(t, res, "handler")) != "bootstrap" {
				t.Errorf("%s: want runtime provided.al2023, handler bootstrap", name)
			}
			if a := m.strs(t, attr(t, res, "architectures")); !slices.Equal(a, []string{"arm64"}) {
				t.Errorf("%s: architectures %v, want [arm64] (what .ci/package builds)", name, a)
			}
		})
	}
}

// TestNoWildcardActions: no policy anywhere allows a wildcard action; a
// Deny may use "service:*" (it narrows), never a bare "*". Policies must be
// policy documents so that this test sees them.
func TestNoWildcardActions(t *testing.T) {
	t.Parallel()
	mods, _ := load(t)
	for dir, m := range mods {
		for key, doc := range m.data {
			if !strings.HasPrefix(key, "aws_iam_policy_document.") {
				continue
			}
			for _, st := range statements(t, m, doc) {
				for _, a := range st.actions {
					if !strings.Contains(a, "*") {
						continue
					}
					if st.effect != "Deny" || a == "*" {
						t.Errorf("%s: %s: %s statement with action %q", dir, key, st.effect, a)
					}
				}
			}
		}
		for _, body := range m.files {
			walkAttributes(body, func(a *hclsyntax.Attribute) {
				if a.Name != "policy" && a.Name != "assume_role_policy" {
					return
				}
				if st, ok := a.Expr.(*hclsyntax.ScopeTraversalExpr); !ok || !strings.HasPrefix(refName(st.Traversal), "data.aws_iam_policy_document.") {
					t.Errorf("%s: %s: write the policy as a data.aws_iam_policy_document", dir, a.SrcRange)
				}
			})
		}
	}
}

var placeholder = regexp.MustCompile(`\$\{(\w+)\}`)

// stateMachineActions derives what the definition's integrations need.
func stateMachineActions(t *testing.T, def []byte) []string {
	t.Helper()
	var doc any
	if err := json.Unmarshal(def, &doc); err != nil {
		t.Fatalf("%s: %v", definitionFile, err)
	}
	integrations := map[string][]string{
		"arn:aws:states:::lambda:invoke": {"lambda:InvokeFunction"},
		"arn:aws:states:::s3:getObject":  {"s3:GetObject"},
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if r, ok := v["Resource"].(string); ok {
				actions, known := integrations[r]
				if !known {
					t.Errorf("the definition uses %s, whose IAM actions this test does not know", r)
				}
				out = append(out, actions...)
			}
			if pc, ok := v["ProcessorConfig"].(map[string]any); ok && pc["Mode"] == "DISTRIBUTED" {
				out = append(out, "states:StartExecution", "states:DescribeExecution", "states:StopExecution")
			}
			for _, c := range v {
				walk(c)
			}
		case []any:
			for _, c := range v {
				walk(c)
			}
		}
	}
	walk(doc)
	slices.Sort(out)
	return slices.Compact(out)
}

func TestStateMachineUsesGeneratedDefinition(t *testing.T) {
	t.Parallel()
	_, m := load(t)
	sm, ok := m.resources["aws_sfn_state_machine.this"]
	if !ok {
		t.Fatal("no aws_sfn_state_machine.this")
	}
	call, ok := attr(t, sm, "definition").(*hclsyntax.FunctionCallExpr)
	if !ok || call.Name != "templatefile" || len(call.Args) != 2 {
		t.Fatal("definition is not templatefile(file, vars)")
	}
	path := m.str(t, call.Args[0])
	want, err := filepath.Abs(filepath.Join(repoRoot, definitionFile))
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Clean(path) != want {
		t.Errorf("definition file (by default) %s, want the committed %s", path, want)
	}
	def, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(def, []byte("%{")) {
		t.Errorf("%s contains %%{, which templatefile would read as a directive", definitionFile)
	}
	inFile := map[string]bool{}
	for _, match := range placeholder.FindAllSubmatch(def, -1) {
		inFile[string(match[1])] = true
	}
	vars := objectKeys(t, call.Args[1])
	if got, want := sortedKeys(vars), sortedKeys(inFile); !slices.Equal(got, want) {
		t.Errorf("templatefile vars %v, placeholders in %s %v", got, definitionFile, want)
	}
	if v, ok := vars["steps_function_arn"]; ok && !m.refs(v)["aws_lambda_function.steps"] {
		t.Error("steps_function_arn is not the steps function's ARN")
	}

	// The role: exactly what the definition's integrations need, plus log
	// delivery and X-Ray.
	role := strings.TrimSuffix(traversalTo(t, attr(t, sm, "role_arn")), ".arn")
	sts := rolePolicy(t, m, role)
	got := actionsOf(sts)
	need := stateMachineActions(t, def)
	if missing := setDiff(need, got); len(missing) > 0 {
		t.Errorf("the state machine's policy lacks %v, which its definition needs", missing)
	}
	if extra := setDiff(setDiff(got, need), stateMachineExtraActions); len(extra) > 0 {
		t.Errorf("the state machine's policy grants %v, which its definition does not need", extra)
	}
	checkResources(t, m, "state machine", sts)

	logging := child(t, sm, "logging_configuration")
	if !m.refs(attr(t, logging, "log_destination"))["aws_cloudwatch_log_group.state_machine"] {
		t.Error("the state machine does not log to its log group")
	}
	if !m.refs(attr(t, logging, "level"))["var.state_machine_log_level"] {
		t.Error("the log level is not var.state_machine_log_level")
	}
}

func TestEnvironmentMatchesBackend(t *testing.T) {
	t.Parallel()
	_, m := load(t)
	consts := goStringConsts(t, filepath.Join(repoRoot, "cmd/internal/backend"))
	known := map[string]string{} // value → constant
	for name, v := range consts {
		if strings.HasPrefix(name, "Env") {
			known[v] = name
		}
	}
	if len(known) == 0 {
		t.Fatal("no Env* constants in cmd/internal/backend")
	}
	for name, fn := range functions {
		res := m.resources["aws_lambda_function."+name]
		if res == nil {
			t.Errorf("no aws_lambda_function.%s", name)
			continue
		}
		env := objectKeys(t, attr(t, child(t, res, "environment"), "variables"))
		for k := range env {
			if _, ok := known[k]; !ok {
				t.Errorf("%s sets %s, which cmd/internal/backend does not define", name, k)
			}
		}
		for _, v := range localOnlyEnv[name] {
			if _, ok := env[v]; ok {
				t.Errorf("%s sets %s, which is for local runs only", name, v)
			}
		}
		reads := 0
		for _, sel := range goSelectorsFrom(t, filepath.Join(repoRoot, fn.cmd), fn.entry, "backend") {
			v, isEnv := consts[sel]
			if !strings.HasPrefix(sel, "Env") || !isEnv {
				continue
			}
			reads++
			if _, ok := env[v]; !ok && !slices.Contains(localOnlyEnv[name], v) {
				t.Errorf("%s reads %s (backend.%s), which the module does not set", fn.cmd, v, sel)
			}
		}
		if reads == 0 {
			t.Errorf("found no backend.Env* read from %s.%s; the scan is broken", fn.cmd, fn.entry)
		}
	}
	// The module's defaults are the binaries' defaults.
	for variable, constant := range map[string]string{"incoming_prefix": "DefaultIncomingPrefix", "project": "DefaultProject"} {
		if got := m.str(t, attr(t, m.variables[variable], "default")); got != consts[constant] {
			t.Errorf("var.%s defaults to %q, backend.%s is %q", variable, got, constant, consts[constant])
		}
	}
}

// eventPattern evaluates a rule's jsonencode({...}) argument.
func eventPattern(t *testing.T, m *tfModule, rule *hclsyntax.Block) cty.Value {
	t.Helper()
	call, ok := attr(t, rule, "event_pattern").(*hclsyntax.FunctionCallExpr)
	if !ok || call.Name != "jsonencode" || len(call.Args) != 1 {
		t.Fatalf("%s: event_pattern is not jsonencode({...})", rule.DefRange())
	}
	return m.eval(t, call.Args[0])
}

func patternStrings(t *testing.T, v cty.Value, path ...string) []string {
	t.Helper()
	for _, p := range path {
		if !v.Type().IsObjectType() || !v.Type().HasAttribute(p) {
			t.Fatalf("event pattern has no %s", strings.Join(path, "."))
		}
		v = v.GetAttr(p)
	}
	var out []string
	for it := v.ElementIterator(); it.Next(); {
		_, e := it.Element()
		if e.IsKnown() && e.Type().Equals(cty.String) {
			out = append(out, e.AsString())
		}
	}
	return out
}

func TestEventRulesReachIngest(t *testing.T) {
	t.Parallel()
	_, m := load(t)
	ingest := goStringConsts(t, filepath.Join(repoRoot, "cmd/ingest"))
	sfn := goStringConsts(t, filepath.Join(repoRoot, "statemachine/sfn"))
	rules := map[string]struct{ source, detailType string }{
		"upload":           {ingest["sourceS3"], ingest["detailObjectCreated"]},
		"execution_failed": {sfn["StatusChangeSource"], sfn["StatusChangeDetailType"]},
	}
	for name, want := range rules {
		rule, ok := m.resources["aws_cloudwatch_event_rule."+name]
		if !ok {
			t.Errorf("no aws_cloudwatch_event_rule.%s", name)
			continue
		}
		if want.source == "" || want.detailType == "" {
			t.Fatalf("event constants for %s not found in the Go code", name)
		}
		p := eventPattern(t, m, rule)
		if got := patternStrings(t, p, "source"); !slices.Equal(got, []string{want.source}) {
			t.Errorf("%s: source %v, want [%s]", name, got, want.source)
		}
		if got := patternStrings(t, p, "detail-type"); !slices.Equal(got, []string{want.detailType}) {
			t.Errorf("%s: detail-type %v, want [%s]", name, got, want.detailType)
		}
		var target, permission bool
		for key, res := range m.resources {
			switch {
			case strings.HasPrefix(key, "aws_cloudwatch_event_target."):
				if m.refs(attr(t, res, "rule"))["aws_cloudwatch_event_rule."+name] {
					target = m.refs(attr(t, res, "arn"))["aws_lambda_function.ingest"]
				}
			case strings.HasPrefix(key, "aws_lambda_permission."):
				if m.refs(attr(t, res, "source_arn"))["aws_cloudwatch_event_rule."+name] {
					permission = m.refs(attr(t, res, "function_name"))["aws_lambda_function.ingest"] &&
						m.str(t, attr(t, res, "principal")) == "events.amazonaws.com"
				}
			}
		}
		if !target || !permission {
			t.Errorf("%s: target to ingest %v, permission for EventBridge %v; want both", name, target, permission)
		}
	}
	failed := eventPattern(t, m, m.resources["aws_cloudwatch_event_rule.execution_failed"])
	if got := patternStrings(t, failed, "detail", "status"); !slices.Equal(slices.Sorted(slices.Values(got)), []string{"ABORTED", "FAILED", "TIMED_OUT"}) {
		t.Errorf("execution_failed statuses %v, want FAILED, TIMED_OUT, ABORTED", got)
	}
	upload := eventPattern(t, m, m.resources["aws_cloudwatch_event_rule.upload"])
	key := upload.GetAttr("detail").GetAttr("object").GetAttr("key").Index(cty.NumberIntVal(0)).GetAttr("prefix")
	if !key.IsKnown() || key.AsString() != m.str(t, attr(t, m.variables["incoming_prefix"], "default")) {
		t.Errorf("upload rule key prefix %#v, want var.incoming_prefix", key)
	}
}

func TestTerraformFmt(t *testing.T) {
	t.Parallel()
	tf, err := exec.LookPath("terraform")
	if err != nil {
		t.Skip("terraform is not on PATH; .ci/run and `make tf-fmt` run terraform fmt -check")
	}
	cmd := exec.Command(tf, "fmt", "-check", "-recursive", "-list=true", ".")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("terraform fmt -check: %v\n%s", err, out)
	}
}
