package terraform_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/tryfunc"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// This file reads Terraform configurations statically: no providers, no
// plan. Expressions are evaluated with variable defaults, locals, path.* and
// a few of Terraform's functions; every resource attribute is unknown.

// repoRoot is the module root; `go test` runs in this package's directory.
const repoRoot = ".."

// tfModule is one directory of .tf files.
type tfModule struct {
	dir       string // absolute
	files     map[string]*hclsyntax.Body
	resources map[string]*hclsyntax.Block // "aws_s3_bucket.this"
	data      map[string]*hclsyntax.Block // "aws_iam_policy_document.steps"
	variables map[string]*hclsyntax.Block
	outputs   map[string]*hclsyntax.Block
	modules   map[string]*hclsyntax.Block
	locals    map[string]hclsyntax.Expression
	dynamics  map[string]bool // labels of dynamic blocks (their iterators)
	ctx       *hcl.EvalContext
}

// loadModules parses every .tf file under root, once for all tests; any
// parse error fails every test that loads them.
func loadModules(t *testing.T, root string) map[string]*tfModule {
	t.Helper()
	if root != "." {
		t.Fatalf("loadModules reads the terraform directory only, not %s", root)
	}
	mods, errs := loadOnce()
	for _, err := range errs {
		t.Error(err)
	}
	if len(errs) > 0 {
		t.FailNow()
	}
	return mods
}

var loadOnce = sync.OnceValues(func() (map[string]*tfModule, []error) { return parseModules(".") })

func parseModules(root string) (map[string]*tfModule, []error) {
	var errs []error
	parser := hclparse.NewParser()
	mods := map[string]*tfModule{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".terraform" {
			return filepath.SkipDir
		}
		if d.IsDir() || filepath.Ext(path) != ".tf" {
			return nil
		}
		f, diags := parser.ParseHCLFile(path)
		if diags.HasErrors() {
			errs = append(errs, fmt.Errorf("%s does not parse: %s", path, diags.Error()))
			return nil
		}
		dir, err := filepath.Abs(filepath.Dir(path))
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		m := mods[rel]
		if m == nil {
			m = &tfModule{
				dir: dir, files: map[string]*hclsyntax.Body{},
				resources: map[string]*hclsyntax.Block{}, data: map[string]*hclsyntax.Block{},
				variables: map[string]*hclsyntax.Block{}, outputs: map[string]*hclsyntax.Block{},
				modules: map[string]*hclsyntax.Block{}, locals: map[string]hclsyntax.Expression{},
				dynamics: map[string]bool{},
			}
			mods[rel] = m
		}
		body := f.Body.(*hclsyntax.Body)
		m.files[filepath.Base(path)] = body
		errs = append(errs, m.index(path, body)...)
		return nil
	})
	if err != nil {
		errs = append(errs, err)
	}
	for _, m := range mods {
		m.ctx = m.evalContext()
	}
	return mods, errs
}

func (m *tfModule) index(path string, body *hclsyntax.Body) []error {
	var errs []error
	add := func(into map[string]*hclsyntax.Block, key string, b *hclsyntax.Block) {
		if _, dup := into[key]; dup {
			errs = append(errs, fmt.Errorf("%s: %s %s declared twice", path, b.Type, key))
		}
		into[key] = b
	}
	for _, b := range body.Blocks {
		switch b.Type {
		case "resource":
			add(m.resources, b.Labels[0]+"."+b.Labels[1], b)
		case "data":
			add(m.data, b.Labels[0]+"."+b.Labels[1], b)
		case "variable":
			add(m.variables, b.Labels[0], b)
		case "output":
			add(m.outputs, b.Labels[0], b)
		case "module":
			add(m.modules, b.Labels[0], b)
		case "locals":
			for name, a := range b.Body.Attributes {
				if _, dup := m.locals[name]; dup {
					errs = append(errs, fmt.Errorf("%s: local %s declared twice", path, name))
				}
				m.locals[name] = a.Expr
			}
		}
	}
	walkBlocks(body, func(b *hclsyntax.Block) {
		if b.Type == "dynamic" && len(b.Labels) == 1 {
			m.dynamics[b.Labels[0]] = true
		}
	})
	return errs
}

// walkBlocks calls fn on every block nested in body.
func walkBlocks(body *hclsyntax.Body, fn func(*hclsyntax.Block)) {
	for _, b := range body.Blocks {
		fn(b)
		walkBlocks(b.Body, fn)
	}
}

// walkAttributes calls fn on every attribute in body and its blocks.
func walkAttributes(body *hclsyntax.Body, fn func(*hclsyntax.Attribute)) {
	for _, a := range body.Attributes {
		fn(a)
	}
	for _, b := range body.Blocks {
		walkAttributes(b.Body, fn)
	}
}

// tfFunctions are the Terraform functions the configurations' locals and
// checked expressions use.
var tfFunctions = map[string]function.Function{
	"coalesce":   stdlib.CoalesceFunc,
	"concat":     stdlib.ConcatFunc,
	"contains":   stdlib.ContainsFunc,
	"format":     stdlib.FormatFunc,
	"jsonencode": stdlib.JSONEncodeFunc,
	"join":       stdlib.JoinFunc,
	"merge":      stdlib.MergeFunc,
	"regex":      stdlib.RegexFunc,
	"can":        tryfunc.CanFunc,
	"split":      stdlib.SplitFunc,
}

// evalContext binds var.* to defaults (unknown without one), path.* to the
// module directory, every resource and data source to unknown, and local.*
// to whatever evaluates.
func (m *tfModule) evalContext() *hcl.EvalContext { return m.evalContextWith(nil) }

// evalContextWith is evalContext with some variables set, as a caller of
// the module would set them.
func (m *tfModule) evalContextWith(set map[string]cty.Value) *hcl.EvalContext {
	vars := map[string]cty.Value{}
	for name, b := range m.variables {
		vars[name] = cty.DynamicVal
		if a, ok := b.Body.Attributes["default"]; ok {
			if v, diags := a.Expr.Value(nil); !diags.HasErrors() {
				vars[name] = v
			}
		}
		if v, ok := set[name]; ok {
			vars[name] = v
		}
	}
	ctx := &hcl.EvalContext{
		Variables: map[string]cty.Value{
			"var":    cty.ObjectVal(vars),
			"path":   cty.ObjectVal(map[string]cty.Value{"module": cty.StringVal(m.dir), "root": cty.StringVal(m.dir), "cwd": cty.StringVal(m.dir)}),
			"data":   cty.DynamicVal,
			"module": cty.DynamicVal,
		},
		Functions: tfFunctions,
	}
	for key := range m.resources {
		typ, _, _ := strings.Cut(key, ".")
		ctx.Variables[typ] = cty.DynamicVal
	}
	// Locals may use each other: evaluate until nothing changes.
	locals := map[string]cty.Value{}
	for name := range m.locals {
		locals[name] = cty.DynamicVal
	}
	for range len(m.locals) + 1 {
		ctx.Variables["local"] = cty.ObjectVal(locals)
		changed := false
		for name, expr := range m.locals {
			v, diags := expr.Value(ctx)
			if diags.HasErrors() || v.RawEquals(locals[name]) {
				continue
			}
			locals[name], changed = v, true
		}
		if !changed {
			break
		}
	}
	ctx.Variables["local"] = cty.ObjectVal(locals)
	return ctx
}

// eval evaluates expr; errors fail the test.
func (m *tfModule) eval(t *testing.T, expr hcl.Expression) cty.Value {
	t.Helper()
	v, diags := expr.Value(m.ctx)
	if diags.HasErrors() {
		t.Fatalf("%s: %s", expr.Range(), diags.Error())
	}
	return v
}

// str evaluates expr to a known string.
func (m *tfModule) str(t *testing.T, expr hcl.Expression) string {
	t.Helper()
	v := m.eval(t, expr)
	if !v.IsWhollyKnown() || v.IsNull() || !v.Type().Equals(cty.String) {
		t.Fatalf("%s: want a static string, got %#v", expr.Range(), v)
	}
	return v.AsString()
}

// strs evaluates expr to a known list of strings.
func (m *tfModule) strs(t *testing.T, expr hcl.Expression) []string {
	t.Helper()
	v := m.eval(t, expr)
	if !v.IsWhollyKnown() || v.IsNull() || !(v.Type().IsListType() || v.Type().IsTupleType() || v.Type().IsSetType()) {
		t.Fatalf("%s: want a static list of strings, got %#v", expr.Range(), v)
	}
	var out []string
	for it := v.ElementIterator(); it.Next(); {
		_, e := it.Element()
		if !e.Type().Equals(cty.String) {
			t.Fatalf("%s: element %#v is not a string", expr.Range(), e)
		}
		out = append(out, e.AsString())
	}
	return out
}

// attr returns a block's attribute expression; a missing one fails.
func attr(t *testing.T, b *hclsyntax.Block, name string) hclsyntax.Expression {
	t.Helper()
	a, ok := b.Body.Attributes[name]
	if !ok {
		t.Fatalf("%s %v: no %s", b.Type, b.Labels, name)
	}
	return a.Expr
}

// child returns the one nested block of a type; none or several fail.
func child(t *testing.T, b *hclsyntax.Block, typ string) *hclsyntax.Block {
	t.Helper()
	var found []*hclsyntax.Block
	for _, c := range b.Body.Blocks {
		if c.Type == typ {
			found = append(found, c)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s %v: %d %s blocks, want 1", b.Type, b.Labels, len(found), typ)
	}
	return found[0]
}

// refs names what expr refers to, as "local.x", "var.x", "data.t.n" or
// "t.n", following locals into their own references.
func (m *tfModule) refs(expr hcl.Expression) map[string]bool {
	out := map[string]bool{}
	var visit func(hcl.Expression)
	visit = func(e hcl.Expression) {
		for _, tr := range e.Variables() {
			name := refName(tr)
			if out[name] {
				continue
			}
			out[name] = true
			if local, ok := strings.CutPrefix(name, "local."); ok {
				if le, ok := m.locals[local]; ok {
					visit(le)
				}
			}
		}
	}
	visit(expr)
	return out
}

func refName(tr hcl.Traversal) string {
	parts := []string{tr.RootName()}
	want := 2
	if tr.RootName() == "data" {
		want = 3
	}
	for _, step := range tr[1:] {
		if len(parts) == want {
			break
		}
		a, ok := step.(hcl.TraverseAttr)
		if !ok {
			break
		}
		parts = append(parts, a.Name)
	}
	return strings.Join(parts, ".")
}

// traversalTo returns the "type.name" an expression such as
// aws_iam_role.steps.arn points at.
func traversalTo(t *testing.T, expr hclsyntax.Expression) string {
	t.Helper()
	st, ok := expr.(*hclsyntax.ScopeTraversalExpr)
	if !ok {
		t.Fatalf("%s: want a plain reference", expr.Range())
	}
	return refName(st.Traversal)
}

// objectKeys returns the static keys of an object constructor.
func objectKeys(t *testing.T, expr hclsyntax.Expression) map[string]hclsyntax.Expression {
	t.Helper()
	obj, ok := expr.(*hclsyntax.ObjectConsExpr)
	if !ok {
		t.Fatalf("%s: want an object { ... }", expr.Range())
	}
	out := map[string]hclsyntax.Expression{}
	for _, item := range obj.Items {
		k, diags := item.KeyExpr.Value(nil)
		if diags.HasErrors() || !k.Type().Equals(cty.String) {
			t.Fatalf("%s: object keys must be static names", item.KeyExpr.Range())
		}
		out[k.AsString()] = item.ValueExpr
	}
	return out
}

// goStringConsts returns the string constants declared in the non-test Go
// files of dir, by name. Parsing (rather than importing) is what lets this
// test read constants of cmd/... packages: Go allows importing cmd/internal
// only from within cmd/.
func goStringConsts(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, f := range parseGoDir(t, dir) {
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					s, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					out[name.Name] = s
				}
			}
		}
	}
	return out
}

// goSelectorsFrom returns the names selected from the import named pkg
// (e.g. "backend" → {"EnvTable", ...}) in the package-level function entry
// of dir's non-test files and in every function of that package it calls,
// transitively: what one mode of a binary reads, not what the whole binary
// does.
func goSelectorsFrom(t *testing.T, dir, entry, pkg string) []string {
	t.Helper()
	funcs := map[string]*ast.FuncDecl{}
	for _, f := range parseGoDir(t, dir) {
		for _, decl := range f.Decls {
			if fd, ok := decl.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Body != nil {
				funcs[fd.Name.Name] = fd
			}
		}
	}
	if funcs[entry] == nil {
		t.Fatalf("%s has no function %s", dir, entry)
	}
	seen := map[string]bool{}
	visited := map[string]bool{}
	var visit func(name string)
	visit = func(name string) {
		fd := funcs[name]
		if fd == nil || visited[name] {
			return
		}
		visited[name] = true
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if id, ok := n.X.(*ast.Ident); ok && id.Name == pkg {
					seen[n.Sel.Name] = true
				}
			case *ast.Ident:
				visit(n.Name) // a call, or a function passed as a value
			}
			return true
		})
	}
	visit(entry)
	return sortedKeys(seen)
}

func parseGoDir(t *testing.T, dir string) []*ast.File {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, path := range matches {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		t.Fatalf("no Go files in %s", dir)
	}
	return files
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// setDiff returns the elements of a that are not in b, sorted.
func setDiff(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) && !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return out
}
