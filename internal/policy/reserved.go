package policy

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
)

// reservedAddr is an address of the proxy's own services (its HTTP API, the
// browsers it drives) that no session's browser may open: a page there
// would show one session what belongs to every session, and no
// allow-list entry makes that right.
type reservedAddr struct {
	host  host
	port  string
	local bool // a loopback or unspecified host: every loopback name matches
}

func (r reservedAddr) match(h host, port string) bool {
	if port != r.port {
		return false
	}
	if r.local && isLocal(h) {
		return true
	}
	return h.name == r.host.name
}

// isLocal reports whether the browser reaches h on its own machine by a
// loopback name: localhost and its subdomains, 127.0.0.0/8, ::1, and the
// unspecified addresses, which connect to the local host.
func isLocal(h host) bool {
	if h.ip.IsValid() {
		return h.ip.IsLoopback() || h.ip.IsUnspecified()
	}
	return h.name == "localhost" || strings.HasSuffix(h.name, ".localhost")
}

func compileReserved(addrs []string) ([]reservedAddr, error) {
	var out []reservedAddr
	for _, a := range addrs {
		hostname, port, err := net.SplitHostPort(strings.TrimSpace(a))
		if err != nil || port == "" || port == "0" {
			return nil, fmt.Errorf("reserved address %q: want host:port", a)
		}
		h, err := normaliseHost(hostname)
		if err != nil {
			return nil, fmt.Errorf("reserved address %q: %w", a, err)
		}
		out = append(out, reservedAddr{host: h, port: port, local: isLocal(h)})
	}
	return out, nil
}

// ReservedAddrs are the host:port addresses under which a service listening
// on addr (as net.Listener.Addr().String() gives it) can be reached from
// this machine: addr itself and, for an unspecified address (0.0.0.0, ::),
// every address of the machine's interfaces with the same port.
func ReservedAddrs(addr string) []string {
	hostname, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil
	}
	out := []string{addr}
	ip := net.ParseIP(hostname)
	if ip == nil || !ip.IsUnspecified() {
		return out
	}
	ifAddrs, err := net.InterfaceAddrs()
	if err != nil {
		return out
	}
	for _, a := range ifAddrs {
		if n, ok := a.(*net.IPNet); ok {
			out = append(out, net.JoinHostPort(n.IP.String(), port))
		}
	}
	return out
}

// IsReserved reports whether a page at raw is on one of the proxy's own
// addresses. The session manager asks it of the page a call leaves behind:
// a redirect can carry a page there without any tool naming the address.
func (p *Policy) IsReserved(raw string) bool {
	u, err := url.Parse(strings.ReplaceAll(cleanURL(raw), `\`, "/"))
	if err != nil || u.Host == "" {
		return false
	}
	h, err := normaliseHost(u.Hostname())
	if err != nil {
		return false
	}
	return p.reservedMatch(h, u) != nil
}

func (p *Policy) reservedMatch(h host, u *url.URL) *reservedAddr {
	port := u.Port()
	if port == "" {
		port = defaultPort(u.Scheme)
	}
	for i := range p.reserved {
		if p.reserved[i].match(h, port) {
			return &p.reserved[i]
		}
	}
	return p.dynamic.match(h, port)
}

// dynamicReserved are addresses reserved while the server runs: the CDP
// ports of browsers it starts, which come and go with them.
type dynamicReserved struct {
	mu    sync.RWMutex
	next  int
	addrs map[int]reservedAddr
}

func (d *dynamicReserved) match(h host, port string) *reservedAddr {
	d.mu.RLock()
	defer d.mu.RUnlock()
	for _, r := range d.addrs {
		if r.match(h, port) {
			return &r
		}
	}
	return nil
}

// Reserve adds addr (host:port, a loopback host standing for every
// loopback name, as in Config.Reserved) to the reserved addresses until
// release is called; CheckCall and IsReserved refuse it meanwhile. Safe
// for concurrent use; release may be called more than once. An addr that
// is not host:port reserves nothing: the caller passes the address of a
// service it started, never user input.
func (p *Policy) Reserve(addr string) (release func()) {
	compiled, err := compileReserved([]string{addr})
	if err != nil {
		return func() {}
	}
	d := &p.dynamic
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.addrs == nil {
		d.addrs = map[int]reservedAddr{}
	}
	d.next++
	id := d.next
	d.addrs[id] = compiled[0]
	return func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		delete(d.addrs, id)
	}
}

func defaultPort(scheme string) string {
	switch strings.ToLower(scheme) {
	case "http", "ws":
		return "80"
	case "https", "wss":
		return "443"
	}
	return ""
}
