package netguard_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"

	"github.com/docpipe/docpipe/internal/netguard"
)

func TestNonPublic(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]string{
		// IPv4 special-purpose ranges
		"0.0.0.0": "this-network", "0.1.2.3": "this-network",
		"10.1.2.3": "private", "172.16.5.4": "private", "172.31.255.255": "private", "192.168.0.1": "private",
		"100.64.0.1": "carrier-grade NAT", "100.127.255.254": "carrier-grade NAT",
		"127.0.0.1": "loopback", "127.255.255.254": "loopback",
		"169.254.169.254": "link-local",
		"192.0.0.8":       "IETF protocol assignment", "192.0.0.170": "IETF protocol assignment",
		"192.0.2.1": "documentation", "198.51.100.7": "documentation", "203.0.113.9": "documentation",
		"192.31.196.1": "AS112", "192.175.48.1": "AS112", "192.52.193.1": "AMT", "192.88.99.1": "6to4 relay anycast",
		"198.18.0.1": "benchmarking", "198.19.255.1": "benchmarking",
		"224.0.0.1": "multicast", "239.255.255.250": "multicast",
		"240.0.0.1": "reserved", "254.1.2.3": "reserved", "255.255.255.255": "broadcast",
		// IPv6 special-purpose ranges and what lies outside 2000::/3
		"::": "unspecified", "::1": "loopback", "::127.0.0.1": "IPv4-compatible", "::8.8.8.8": "IPv4-compatible",
		"::ffff:127.0.0.1": "loopback", "::ffff:10.0.0.1": "private",
		"64:ff9b:1::1": "local-use NAT64", "100::1": "discard-only", "100:0:0:1::1": "dummy",
		"2001::1": "IETF protocol assignment", "2001:2::1": "IETF protocol assignment", "2001:db8::1": "documentation",
		"2620:4f:8000::1": "AS112", "3fff::1": "documentation", "5f00::1": "segment routing",
		"fd00::1": "private", "fc00::1": "private", "fe80::1": "link-local", "fe80::1%eth0": "link-local",
		"fec0::1": "site-local", "ff02::1": "multicast", "4000::1": "reserved", "1000::1": "reserved",
		// addresses carrying an IPv4 address are judged by it
		"64:ff9b::7f00:1": "NAT64 of a loopback", "64:ff9b::a9fe:a9fe": "NAT64 of a link-local",
		"64:ff9b::c000:201": "NAT64 of a documentation",
		"2002:7f00:1::1":    "6to4 of a loopback", "2002:a00:1::": "6to4 of a private", "2002:c000:0201::1": "6to4 of a documentation",
		// public
		"93.184.216.34": "", "8.8.8.8": "", "1.1.1.1": "", "192.0.3.1": "", "198.20.0.1": "", "223.255.255.1": "",
		"::ffff:93.184.216.34": "", "2606:4700::1111": "", "2a00:1450:4001::1": "", "2001:4860::8888": "",
		"64:ff9b::808:808": "", "2002:808:808::1": "",
	} {
		if got := netguard.NonPublic(netip.MustParseAddr(addr)); got != want {
			t.Errorf("%s: %q, want %q", addr, got, want)
		}
	}
	if got := netguard.NonPublic(netip.Addr{}); got != "invalid" {
		t.Errorf("zero address: %q", got)
	}
}

// The guard is applied when dialling: a loopback listener is refused
// without a byte sent, and reached once private networks are allowed.
func TestDialer(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	_, err = netguard.Dialer(false).DialContext(context.Background(), "tcp", ln.Addr().String())
	var fa *netguard.ForbiddenAddressError
	if !errors.As(err, &fa) || fa.Kind != "loopback" {
		t.Fatalf("dialling loopback: %v", err)
	}
	c, err := netguard.Dialer(true).DialContext(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("dialling loopback with private networks allowed: %v", err)
	}
	c.Close()
}
