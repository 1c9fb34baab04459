package terraform_test

import (
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// The bucket's lifecycle never expires an object a workflow or a stage
// cache entry points at: the only current-version expiration is the one
// on uploads waiting under the incoming prefix, which registration copies
// to the document's own key. (Noncurrent versions expire too; a workflow
// points at keys, whose current version stays.) Stage outputs reused by
// later workflows live under the workflow that produced them, so they
// last as long as the bucket does.
func TestLifecycleExpiresOnlyUploads(t *testing.T) {
	t.Parallel()
	_, m := load(t)
	lc, ok := m.resources["aws_s3_bucket_lifecycle_configuration.this"]
	if !ok {
		t.Fatal("no aws_s3_bucket_lifecycle_configuration.this")
	}
	expiring := 0
	var check func(b *hclsyntax.Block)
	check = func(b *hclsyntax.Block) {
		for _, c := range b.Body.Blocks {
			check(c)
		}
		if b.Type != "rule" && b.Type != "content" {
			return
		}
		expires := false
		for _, c := range b.Body.Blocks {
			expires = expires || c.Type == "expiration"
		}
		if !expires {
			return
		}
		expiring++
		for _, c := range b.Body.Blocks {
			if c.Type != "filter" {
				continue
			}
			if a, ok := c.Body.Attributes["prefix"]; ok && isVar(a.Expr, "incoming_prefix") {
				return
			}
		}
		t.Errorf("a lifecycle rule at %s expires current objects outside var.incoming_prefix: workflows' and cached outputs would be lost", b.DefRange())
	}
	check(lc)
	if expiring != 1 {
		t.Errorf("%d lifecycle rules expire current objects, want exactly the incoming uploads' one", expiring)
	}
}

// isVar says whether expr is var.<name>.
func isVar(expr hclsyntax.Expression, name string) bool {
	st, ok := expr.(*hclsyntax.ScopeTraversalExpr)
	if !ok || len(st.Traversal) != 2 || st.Traversal.RootName() != "var" {
		return false
	}
	attr, ok := st.Traversal[1].(hcl.TraverseAttr)
	return ok && attr.Name == name
}
