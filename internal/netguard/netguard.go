// Package netguard keeps outbound connections on the public internet: a
// dialer that refuses any address that is not global unicast, so that a
// URL from a document, a pipeline file or a webhook setting cannot reach
// loopback services, the cloud metadata endpoint, a Lambda runtime API or
// anything else on a private network.
//
// The rule is an allow-list: an address is public when it is global
// unicast and lies outside every range of the IANA IPv4 and IPv6
// Special-Purpose Address Registries. IPv6 addresses that carry an IPv4
// address (IPv4-mapped, NAT64 64:ff9b::/96, 6to4 2002::/16) are judged by
// the IPv4 address they carry.
package netguard

import (
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"
)

// ForbiddenAddressError is a connection refused because the address it
// resolved to is not on the public internet.
type ForbiddenAddressError struct {
	Address string // host:port as dialled
	Kind    string // what the address is, e.g. "loopback"
}

func (e *ForbiddenAddressError) Error() string {
	return fmt.Sprintf("refusing to connect to %s: %s address (allowing private networks permits it)", e.Address, e.Kind)
}

type specialRange struct {
	prefix netip.Prefix
	kind   string
}

func ranges(kv ...string) []specialRange {
	rs := make([]specialRange, 0, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		rs = append(rs, specialRange{netip.MustParsePrefix(kv[i]), kv[i+1]})
	}
	return rs
}

// ipv4Special is the IANA IPv4 Special-Purpose Address Registry, plus
// multicast; the first range that holds an address names it.
var ipv4Special = ranges(
	"0.0.0.0/8", "this-network",
	"10.0.0.0/8", "private",
	"100.64.0.0/10", "carrier-grade NAT",
	"127.0.0.0/8", "loopback",
	"169.254.0.0/16", "link-local",
	"172.16.0.0/12", "private",
	"192.0.0.0/24", "IETF protocol assignment",
	"192.0.2.0/24", "documentation",
	"192.31.196.0/24", "AS112",
	"192.52.193.0/24", "AMT",
	"192.88.99.0/24", "6to4 relay anycast",
	"192.168.0.0/16", "private",
	"192.175.48.0/24", "AS112",
	"198.18.0.0/15", "benchmarking",
	"198.51.100.0/24", "documentation",
	"203.0.113.0/24", "documentation",
	"224.0.0.0/4", "multicast",
	"255.255.255.255/32", "broadcast",
	"240.0.0.0/4", "reserved",
)

// ipv6Special is the IANA IPv6 Special-Purpose Address Registry (the
// ranges that carry an IPv4 address are decoded instead) and the
// non-global-unicast blocks outside 2000::/3 worth naming.
var ipv6Special = ranges(
	"::/128", "unspecified",
	"::1/128", "loopback",
	"::/96", "IPv4-compatible",
	"64:ff9b:1::/48", "local-use NAT64",
	"100::/64", "discard-only",
	"100:0:0:1::/64", "dummy",
	"2001::/23", "IETF protocol assignment",
	"2001:db8::/32", "documentation",
	"2620:4f:8000::/48", "AS112",
	"3fff::/20", "documentation",
	"5f00::/16", "segment routing",
	"fc00::/7", "private",
	"fe80::/10", "link-local",
	"fec0::/10", "site-local",
	"ff00::/8", "multicast",
)

var (
	// globalUnicast6 is the only IPv6 block IANA allocates for global unicast.
	globalUnicast6 = netip.MustParsePrefix("2000::/3")
	nat64          = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour      = netip.MustParsePrefix("2002::/16")
)

// NonPublic names the kind of address ip is when it is not public, and
// returns "" when it is.
func NonPublic(ip netip.Addr) string {
	ip = ip.Unmap().WithZone("")
	switch {
	case !ip.IsValid():
		return "invalid"
	case ip.Is4():
		return kindIn(ip, ipv4Special)
	case nat64.Contains(ip):
		b := ip.As16()
		return carried("NAT64", netip.AddrFrom4([4]byte(b[12:16])))
	case sixToFour.Contains(ip):
		b := ip.As16()
		return carried("6to4", netip.AddrFrom4([4]byte(b[2:6])))
	}
	if kind := kindIn(ip, ipv6Special); kind != "" {
		return kind
	}
	if !globalUnicast6.Contains(ip) {
		return "reserved"
	}
	return ""
}

// carried judges an IPv6 address by the IPv4 address inside it.
func carried(via string, ip4 netip.Addr) string {
	if kind := NonPublic(ip4); kind != "" {
		return via + " of a " + kind
	}
	return ""
}

func kindIn(ip netip.Addr, rs []specialRange) string {
	for _, r := range rs {
		if r.prefix.Contains(ip) {
			return r.kind
		}
	}
	return ""
}

// Dialer connects only to public addresses unless allowPrivate is set.
// The check runs on the address actually dialled, after name resolution,
// so a name that resolves to a public address once and a private one
// later (DNS rebinding) cannot reach the private one. Clients using it
// must not use a proxy, which would dial on their behalf.
func Dialer(allowPrivate bool) *net.Dialer {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if allowPrivate {
		return d
	}
	d.Control = func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return &ForbiddenAddressError{Address: address, Kind: "unparsable"}
		}
		if kind := NonPublic(ap.Addr()); kind != "" {
			return &ForbiddenAddressError{Address: address, Kind: kind}
		}
		return nil
	}
	return d
}
