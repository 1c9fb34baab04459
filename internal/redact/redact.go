// Package redact hides the secrets a URL may carry before it is shown: in
// help, logs, errors, `pipeline show` and the dashboard. Every display of
// a configured URL goes through URL, so there is one rule to keep.
package redact

import (
	"net/url"
	"strings"
)

// Mask replaces every hidden value.
const Mask = "REDACTED"

// URL returns raw with its user information and the values of
// secret-looking query parameters replaced by Mask. A string that does
// not parse as a URL is hidden whole: it may be anything.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	if u.User != nil {
		// A user name alone is often an API key (https://KEY@host/).
		u.User = url.User(Mask)
	}
	u.RawQuery = query(u.RawQuery)
	if u.Fragment != "" && strings.Contains(u.Fragment, "=") {
		// OAuth implicit grants put access_token=... in the fragment.
		u.RawFragment, u.Fragment = "", ""
		return u.String() + "#" + query(fragment(raw))
	}
	return u.String()
}

func fragment(raw string) string {
	_, f, _ := strings.Cut(raw, "#")
	return f
}

// query masks the values of secret-looking parameters, keeping the
// parameters' order and encoding.
func query(raw string) string {
	if raw == "" {
		return ""
	}
	parts := strings.Split(raw, "&")
	for i, p := range parts {
		k, _, hasValue := strings.Cut(p, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			name = k
		}
		if hasValue && SecretName(name) {
			parts[i] = k + "=" + Mask
		}
	}
	return strings.Join(parts, "&")
}

// secretNames are parameter names that hold secrets, compared lower-case
// with '-' read as '_'.
var secretNames = map[string]bool{
	"key": true, "apikey": true, "api_key": true, "token": true, "secret": true,
	"password": true, "passwd": true, "pwd": true, "pass": true, "auth": true, "authorization": true,
	"sig": true, "signature": true, "code": true, "credential": true, "credentials": true,
	"session": true, "sessionid": true, "jwt": true,
}

// secretParts mark a name as secret wherever they appear in it
// (access_token, client_secret, X-Amz-Signature, X-Amz-Credential,
// X-Goog-Signature, aws_access_key_id).
var secretParts = []string{"token", "secret", "password", "passwd", "signature", "credential", "api_key", "apikey", "access_key", "private_key"}

// SecretName reports whether a parameter or header of this name likely
// holds a secret.
func SecretName(name string) bool {
	n := strings.ReplaceAll(strings.ToLower(name), "-", "_")
	if secretNames[n] || strings.HasSuffix(n, "_key") || strings.HasSuffix(n, "_sig") {
		return true
	}
	for _, part := range secretParts {
		if strings.Contains(n, part) {
			return true
		}
	}
	return false
}
