package dashboard

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"
)

// User is one person of a users file: who they are, the SHA-256 of the
// token that proves it, and the groups whose reviews they may take.
type User struct {
	Name        string   `yaml:"name"`
	TokenSHA256 string   `yaml:"token_sha256"`
	Groups      []string `yaml:"groups"`
}

// Users are the people of a users file, by the hash of their token.
type Users struct {
	byHash map[[sha256.Size]byte]User
}

// LoadUsers reads a users file:
//
//	users:
//	  - name: alice
//	    token_sha256: 9f86d0...   # printf %s "$TOKEN" | sha256sum
//	    groups: [legal]
//
// Only hashes are stored, so the file holds no secret.
func LoadUsers(path string) (*Users, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("users file: %w", err)
	}
	return ParseUsers(path, raw)
}

// ParseUsers parses a users file's content; source names it in errors.
func ParseUsers(source string, raw []byte) (*Users, error) {
	var f struct {
		Users []User `yaml:"users"`
	}
	dec := yaml.NewDecoder(strings.NewReader(string(raw)))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	u := &Users{byHash: make(map[[sha256.Size]byte]User, len(f.Users))}
	names := map[string]bool{}
	for i, user := range f.Users {
		where := fmt.Sprintf("%s: user %d", source, i+1)
		if user.Name == "" || strings.ContainsAny(user.Name, "\n\r\t") {
			return nil, fmt.Errorf("%s: a user needs a name on one line", where)
		}
		if names[user.Name] {
			return nil, fmt.Errorf("%s: %s is listed twice", where, user.Name)
		}
		names[user.Name] = true
		raw, err := hex.DecodeString(user.TokenSHA256)
		if err != nil || len(raw) != sha256.Size {
			return nil, fmt.Errorf("%s (%s): token_sha256 must be 64 hex digits, the SHA-256 of the token (printf %%s \"$TOKEN\" | sha256sum)", where, user.Name)
		}
		h := [sha256.Size]byte(raw)
		if other, dup := u.byHash[h]; dup {
			return nil, fmt.Errorf("%s (%s): has the same token as %s", where, user.Name, other.Name)
		}
		if user.Groups == nil {
			user.Groups = []string{}
		}
		u.byHash[h] = user
	}
	if len(u.byHash) == 0 {
		return nil, fmt.Errorf("%s: no users", source)
	}
	return u, nil
}

// lookup finds the user a token belongs to.
func (u *Users) lookup(token string) (User, bool) {
	if u == nil || token == "" {
		return User{}, false
	}
	user, ok := u.byHash[sha256.Sum256([]byte(token))]
	return user, ok
}

// identity is who a request acts as: a user whose own token proved it,
// else nobody in particular (a shared token, or none on loopback), whose
// review actions carry a typed name the audit trail marks as unverified.
type identity struct {
	user     User
	verified bool
}

type identityKey struct{}

func withIdentity(ctx context.Context, id identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

func identityFrom(ctx context.Context) identity {
	id, _ := ctx.Value(identityKey{}).(identity)
	return id
}
