package dashboard

import (
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"strings"
)

// EnvToken names the environment variable `docpipe serve` reads the token
// from when --token is not given.
const EnvToken = "DOCPIPE_TOKEN"

// tokenCookie carries the token after one visit to /?token=...
const tokenCookie = "docpipe_token"

// contentSecurityPolicy allows nothing but this server's own scripts,
// styles and images: no inline script, no outside host.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; frame-ancestors 'none'"

// MinTokenLength is the shortest token accepted: 16 random characters
// are beyond guessing at any rate a server answers.
const MinTokenLength = 16

// CheckToken refuses a token short enough to guess; "" is no token.
func CheckToken(token string) error {
	if token != "" && len(token) < MinTokenLength {
		return fmt.Errorf("the token must be at least %d characters (it has %d); make one with: openssl rand -hex 24", MinTokenLength, len(token))
	}
	return nil
}

// CheckListen refuses to expose the dashboard beyond this machine without a
// token: any address other than a loopback one needs the shared token or
// a users file.
func CheckListen(addr, token string, users bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", addr, err)
	}
	if err := CheckToken(token); err != nil {
		return err
	}
	if token != "" || users || isLoopback(host) {
		return nil
	}
	return fmt.Errorf("listening on %s reaches beyond this machine: set a token (--token or %s) or listen on 127.0.0.1", addr, EnvToken)
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// requireLoopbackHost guards a dashboard without a token against DNS
// rebinding: a page on attacker.example whose name later resolves to
// 127.0.0.1 sends "Host: attacker.example", which is refused with 421.
// Only loopback addresses and localhost, with any port, are accepted.
func requireLoopbackHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if host == "" || !isLoopback(host) {
			writeError(w, http.StatusMisdirectedRequest, "this dashboard answers only to localhost and loopback addresses; set a token to serve it under another name")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		next.ServeHTTP(w, r)
	})
}

// requireToken accepts a request that carries the shared token, or a
// user's own token from the users file, as "Authorization: Bearer
// <token>" or in the cookie. Visiting any page with ?token=<token> sets
// the cookie (HttpOnly, SameSite=Strict) and redirects to the same page
// without the token in its address. A user's token makes the request act
// as that user (identityFrom).
func requireToken(token string, users *Users, next http.Handler) http.Handler {
	if token == "" && users == nil {
		return requireLoopbackHost(next)
	}
	// accept reports who a presented token proves, if anyone.
	accept := func(got string) (identity, bool) {
		if token != "" && subtle.ConstantTimeCompare([]byte(got), []byte(token)) == 1 {
			return identity{}, true
		}
		if u, ok := users.lookup(got); ok {
			return identity{user: u, verified: true}, true
		}
		return identity{}, false
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if got, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); found {
			if id, ok := accept(got); ok {
				next.ServeHTTP(w, r.WithContext(withIdentity(r.Context(), id)))
				return
			}
		}
		if c, err := r.Cookie(tokenCookie); err == nil {
			if id, ok := accept(c.Value); ok {
				next.ServeHTTP(w, r.WithContext(withIdentity(r.Context(), id)))
				return
			}
		}
		if q := r.URL.Query(); r.Method == http.MethodGet && q.Has("token") {
			if _, ok := accept(q.Get("token")); ok {
				http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: q.Get("token"), Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
				q.Del("token")
				u := *r.URL
				u.RawQuery = q.Encode()
				http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
				return
			}
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="docpipe"`)
		writeError(w, http.StatusUnauthorized, "a token is required: send Authorization: Bearer <token>, or open /?token=<token> once")
	})
}
