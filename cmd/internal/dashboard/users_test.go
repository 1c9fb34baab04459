package dashboard

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline"
)

const (
	aliceToken = "alice-token-0123456789abcdef"
	bobToken   = "bob-token-0123456789abcdef00"
	shared     = "shared-token-0123456789abcdef"
)

func tokenHash(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

func testUsers(t *testing.T) *Users {
	t.Helper()
	u, err := ParseUsers("users.yaml", []byte(`users:
  - name: alice
    token_sha256: `+tokenHash(aliceToken)+`
    groups: [legal]
  - name: bob
    token_sha256: `+tokenHash(bobToken)+`
`))
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// actAs posts a review action with a bearer token and a JSON body.
func (b *testBundle) actAs(t *testing.T, token, id, action, body string) response {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/api/reviews/"+id+"/"+action, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	return b.do(t, req)
}

// With a users file, a person's own token says who acts: their name and
// groups, verified in the audit trail. A group's review is only for its
// members, a typed name cannot stand in for another, and a name typed
// with the shared token is recorded as unverified.
func TestUsersFileIdentities(t *testing.T) {
	t.Parallel()
	b := setup(t, func(o *Options) { o.Users, o.Token = testUsers(t), shared })
	legal := b.openReview(t, "contract.txt", pipeline.ReviewSpec{Group: "legal", DueSeconds: 3600}, time.Now())
	other := b.openReview(t, "memo.txt", pipeline.ReviewSpec{Group: "legal", DueSeconds: 3600}, time.Now())

	if r := b.actAs(t, bobToken, legal.ID, "approve", `{}`); r.code != http.StatusForbidden || !strings.Contains(r.errorText(t), "group legal") {
		t.Fatalf("bob (not in legal) approving: %d %s", r.code, r.body)
	}
	if r := b.actAs(t, bobToken, legal.ID, "approve", `{"by": "alice"}`); r.code != http.StatusForbidden || !strings.Contains(r.errorText(t), "signed in as bob") {
		t.Fatalf("bob typing alice's name: %d %s", r.code, r.body)
	}
	if r := b.actAs(t, "not-a-token-of-anyone-here", legal.ID, "approve", `{"by": "alice"}`); r.code != http.StatusUnauthorized {
		t.Fatalf("an unknown token: %d %s", r.code, r.body)
	}
	if r := b.actAs(t, aliceToken, legal.ID, "approve", `{"comment": "fine"}`); r.code != http.StatusOK {
		t.Fatalf("alice approving: %d %s", r.code, r.body)
	}
	if r := b.actAs(t, shared, other.ID, "approve", `{"by": "carol"}`); r.code != http.StatusOK {
		t.Fatalf("a typed name with the shared token: %d %s", r.code, r.body)
	}

	actors := func(wf string) []pipeline.Transition {
		t.Helper()
		trs, err := b.repo.ListTransitions(t.Context(), wf)
		if err != nil {
			t.Fatal(err)
		}
		var out []pipeline.Transition
		for _, tr := range trs {
			if tr.Actor != "" {
				out = append(out, tr)
			}
		}
		return out
	}
	if got := actors(legal.WorkflowID); len(got) != 1 || got[0].ActorLabel() != "alice" {
		t.Errorf("alice's approval is recorded as %+v, want alice, verified", got)
	}
	if got := actors(other.WorkflowID); len(got) != 1 || got[0].ActorLabel() != "carol (unverified)" {
		t.Errorf("carol's approval is recorded as %+v, want carol (unverified)", got)
	}

	req := httptest.NewRequest(http.MethodGet, "/reviews", nil)
	req.Header.Set("Authorization", "Bearer "+bobToken)
	if page := b.do(t, req); !strings.Contains(string(page.body), "Signed in as <strong>bob</strong>") {
		t.Errorf("the reviews page does not say who is signed in:\n%s", page.body)
	}
}

func TestParseUsersRejects(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"no users":      "users: []\n",
		"bad hash":      "users:\n  - name: a\n    token_sha256: abc\n",
		"no name":       "users:\n  - token_sha256: " + tokenHash("x") + "\n",
		"twice":         "users:\n  - name: a\n    token_sha256: " + tokenHash("x") + "\n  - name: a\n    token_sha256: " + tokenHash("y") + "\n",
		"shared token":  "users:\n  - name: a\n    token_sha256: " + tokenHash("x") + "\n  - name: b\n    token_sha256: " + tokenHash("x") + "\n",
		"unknown field": "users:\n  - name: a\n    token: x\n",
	} {
		if _, err := ParseUsers("users.yaml", []byte(body)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
