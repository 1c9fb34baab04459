package childenv_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// inheritsOnPurpose are the files that start a program with docpipe's
// whole environment on purpose: docpipe itself, which needs its own
// configuration, and the toolchain building it for tests.
var inheritsOnPurpose = map[string]bool{
	"cmd/docpipe/ingest.go":       true, // starts `docpipe work` in the background
	"internal/testbin/testbin.go": true, // builds docpipe for tests with the Go toolchain
}

// Every function outside tests that starts a program sets its
// environment (childenv.Minimal): a program started with exec.Command
// and no Env inherits docpipe's credentials (AWS_*, DOCPIPE_TOKEN, ...).
func TestEveryProgramDocpipeStartsGetsAChosenEnvironment(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || rel == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || inheritsOnPurpose[filepath.ToSlash(rel)] {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			starts, setsEnv := false, false
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.SelectorExpr:
					if x, ok := n.X.(*ast.Ident); ok && x.Name == "exec" && (n.Sel.Name == "Command" || n.Sel.Name == "CommandContext") {
						starts = true
					}
					if n.Sel.Name == "Env" {
						setsEnv = true
					}
				}
				return true
			})
			if starts && !setsEnv {
				t.Errorf("%s: %s starts a program without setting its environment", filepath.ToSlash(rel), fn.Name.Name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
