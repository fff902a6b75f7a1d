package ui

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/ckpt-dev/ckpt/internal/hint"
)

// Sentinel errors of Listen, compared with errors.Is. Both are usage errors.
var (
	ErrBadAddr     = errors.New("bad listen address")
	ErrNotLoopback = errors.New("not a loopback address")
)

// Listener is a bound socket and what the server accepts on it.
type Listener struct {
	net.Listener
	// Hosts is the Host header policy for this address.
	Hosts HostPolicy
	// Remote is true when the address is not loopback (--allow-remote).
	Remote bool
}

// URL is the address the server serves, http://HOST:PORT/.
func (l *Listener) URL() string {
	return "http://" + l.Addr().String() + "/"
}

// Listen binds addr (host:port; port 0 picks a free one). Only a loopback address is
// accepted unless allowRemote: the UI shows everything a session wrote, and anything
// else on the network could read it.
func Listen(addr string, allowRemote bool) (*Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%q: %w: want HOST:PORT, such as 127.0.0.1:0", addr, ErrBadAddr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return nil, fmt.Errorf("%q: %w: port %q is not a number from 0 to 65535", addr, ErrBadAddr, port)
	}
	bind, network := host, "tcp"
	loopback := false
	switch ip := net.ParseIP(host); {
	case strings.EqualFold(host, "localhost"):
		// Bind the IPv4 loopback, not whatever the resolver says localhost is.
		bind, network, loopback = "127.0.0.1", "tcp4", true
	case ip != nil:
		// An IPv4 address is bound as one (0.0.0.0 is not [::]).
		loopback, network = ip.IsLoopback(), "tcp6"
		if ip.To4() != nil {
			network = "tcp4"
		}
	}
	if !loopback && !allowRemote {
		shown := host
		if shown == "" {
			shown = "every interface"
		}
		return nil, hint.New(fmt.Errorf("%q: %w (%s)", addr, ErrNotLoopback, shown), "ckpt ui binds 127.0.0.1 unless --allow-remote is given; then it asks for a token")
	}
	ln, err := net.Listen(network, net.JoinHostPort(bind, port))
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	tcp := ln.Addr().(*net.TCPAddr)
	pol := HostPolicy{Port: strconv.Itoa(tcp.Port), Loopback: loopback}
	if !tcp.IP.IsUnspecified() {
		pol.IP = tcp.IP
	}
	if host != "" && net.ParseIP(host) == nil {
		pol.Names = append(pol.Names, strings.ToLower(host))
	}
	return &Listener{Listener: ln, Hosts: pol, Remote: !loopback}, nil
}

// NewToken returns a random token for --allow-remote: 128 bits, hex.
func NewToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("make token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// HostPolicy says which Host headers a request may carry. A page fetched through a DNS
// name that an attacker controls (DNS rebinding: evil.example resolving to 127.0.0.1)
// carries that name; only IP literals, localhost and the name the server was started
// with are accepted, and only with the port it listens on.
type HostPolicy struct {
	Port string
	// Loopback is true when the server listens on loopback only: then only loopback
	// addresses and localhost are valid hosts.
	Loopback bool
	// IP is the address bound, nil for every interface.
	IP net.IP
	// Names are host names given on the command line (lower case).
	Names []string
}

// Allows reports whether a request's Host header names this server.
func (p HostPolicy) Allows(hostHeader string) bool {
	host, port, err := net.SplitHostPort(hostHeader)
	if err != nil {
		// No port: only valid if we serve on port 80.
		host, port = hostHeader, "80"
	}
	if port != p.Port || host == "" {
		return false
	}
	host = strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	if host == "localhost" {
		return true
	}
	for _, n := range p.Names {
		if host == n {
			return true
		}
	}
	ip := net.ParseIP(host)
	switch {
	case ip == nil:
		return false
	case ip.IsLoopback():
		return true
	case p.Loopback:
		return false
	case p.IP == nil:
		return true
	}
	return ip.Equal(p.IP)
}
