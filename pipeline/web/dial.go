package web

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
	Address string
	Kind    string
}

func (e *ForbiddenAddressError) Error() string {
	return fmt.Sprintf("refusing to connect to %s: %s address (--allow-private-network permits it)", e.Address, e.Kind)
}

// nonPublic names the kind of address ip is when it is not a public one
// ("" when it is). Checked on the address actually dialled, so a name that
// resolves to a public address once and a private one later (DNS
// rebinding) cannot reach the private one.
func nonPublic(ip netip.Addr) string {
	ip = ip.Unmap()
	switch {
	case !ip.IsValid():
		return "invalid"
	case ip.IsLoopback():
		return "loopback"
	case ip.IsPrivate():
		return "private"
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		return "link-local"
	case ip.IsUnspecified():
		return "unspecified"
	case ip.IsMulticast(), ip.IsInterfaceLocalMulticast():
		return "multicast"
	case sharedAddressSpace.Contains(ip):
		return "carrier-grade NAT"
	}
	return ""
}

// sharedAddressSpace (RFC 6598) is private in all but name.
var sharedAddressSpace = netip.MustParsePrefix("100.64.0.0/10")

// dialer connects only to public addresses unless allowPrivate is set.
func dialer(allowPrivate bool) *net.Dialer {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if allowPrivate {
		return d
	}
	d.Control = func(network, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return &ForbiddenAddressError{Address: address, Kind: "unparsable"}
		}
		if kind := nonPublic(ap.Addr()); kind != "" {
			return &ForbiddenAddressError{Address: address, Kind: kind}
		}
		return nil
	}
	return d
}
