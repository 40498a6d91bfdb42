package policy

import (
	"fmt"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/net/idna"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// matcher is one compiled list entry.
type matcher struct {
	spec   string       // normalised entry, for messages and upstream
	host   string       // exact host name or canonical IP
	suffix string       // "*.example.com" → ".example.com"
	prefix netip.Prefix // CIDR entry
}

func (m matcher) match(h host) bool {
	switch {
	case m.prefix.IsValid():
		return h.ip.IsValid() && m.prefix.Contains(h.ip)
	case m.suffix != "":
		return !h.ip.IsValid() && strings.HasSuffix(h.name, m.suffix)
	default:
		return h.name == m.host
	}
}

// host is a URL's host as the browser will resolve it.
type host struct {
	name string     // lower-case ASCII (punycode), no trailing dot; canonical IP text for IPs
	ip   netip.Addr // set for IP literals, unmapped (::ffff:1.2.3.4 is 1.2.3.4)
}

func compile(variable string, entries []string) ([]matcher, error) {
	var out []matcher
	for _, raw := range entries {
		e := strings.TrimSpace(raw)
		if e == "" {
			continue
		}
		m, err := compileEntry(e)
		if err != nil {
			return nil, fmt.Errorf("%s: entry %q: %w", variable, raw, err)
		}
		out = append(out, m)
	}
	return out, nil
}

func compileEntry(e string) (matcher, error) {
	if strings.Contains(e, "/") && !strings.Contains(e, "://") {
		p, err := netip.ParsePrefix(e)
		if err != nil {
			return matcher{}, fmt.Errorf("not a host name, *.domain, IP address or CIDR prefix")
		}
		p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-unmapBits(p.Addr())).Masked()
		return matcher{spec: p.String(), prefix: p}, nil
	}
	if strings.ContainsAny(e, "/@?#") || strings.Contains(e, "://") {
		return matcher{}, fmt.Errorf("give a host name, *.domain, IP address or CIDR prefix, without scheme, port or path")
	}
	if rest, ok := strings.CutPrefix(e, "*."); ok {
		h, err := normaliseHost(rest)
		if err != nil {
			return matcher{}, err
		}
		if h.ip.IsValid() {
			return matcher{}, fmt.Errorf("a wildcard needs a domain name, not an IP address")
		}
		return matcher{spec: "*." + h.name, suffix: "." + h.name}, nil
	}
	if strings.Contains(e, "*") {
		return matcher{}, fmt.Errorf("only a leading \"*.\" wildcard is supported")
	}
	h, err := normaliseHost(strings.TrimSuffix(strings.TrimPrefix(e, "["), "]"))
	if err != nil {
		return matcher{}, err
	}
	return matcher{spec: h.name, host: h.name}, nil
}

// unmapBits is how many prefix bits an IPv4-mapped IPv6 prefix loses when unmapped.
func unmapBits(a netip.Addr) int {
	if a.Is4In6() {
		return 96
	}
	return 0
}

// schemeRE is what a browser's URL parser takes as a scheme.
var schemeRE = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.\-]*:`)

// CheckURL returns nil when a tool may open raw, else a DOMAIN_BLOCKED
// *proxy.Error. It parses raw the way the browser will: a value with no
// scheme gets the https:// (http:// for localhost) that upstream's
// browser_navigate adds, backslashes count as slashes, tabs and newlines are
// dropped, and the host is compared after IDNA, lower-casing, trailing-dot
// and IPv4-shorthand normalisation. Anything it cannot parse is refused.
func (p *Policy) CheckURL(raw string) error {
	if e := p.checkURL(raw); e != nil {
		return e
	}
	return nil
}

func (p *Policy) checkURL(raw string) *proxy.Error {
	s := cleanURL(raw)
	if !schemeRE.MatchString(s) {
		// Upstream's browser_navigate does the same before navigating.
		if strings.HasPrefix(s, "localhost") {
			s = "http://" + s
		} else {
			s = "https://" + s
		}
	}
	scheme := strings.ToLower(s[:strings.IndexByte(s, ':')])
	switch scheme {
	case "http", "https":
	case "about":
		if strings.EqualFold(s, "about:blank") {
			return nil
		}
		return p.refuseScheme(raw, scheme)
	case "file":
		if p.fileURLs {
			return nil
		}
		e := p.refuseScheme(raw, scheme)
		e.Suggestion = "file:// URLs are disabled on this server (PROXY_ENABLE_FILE_URLS=false); serve the file over http instead."
		return e
	default:
		return p.refuseScheme(raw, scheme)
	}
	// Special schemes treat "\" as "/": http://evil.com\@good.com is evil.com.
	s = strings.ReplaceAll(s, `\`, "/")
	u, err := url.Parse(s)
	if err != nil || u.Opaque != "" || u.Host == "" {
		e := blocked("refused URL %q: it does not parse as an http(s) URL with a host", raw)
		e.Details["url"] = raw
		e.Suggestion = "Give a full http:// or https:// URL."
		return e
	}
	h, err := normaliseHost(u.Hostname())
	if err != nil {
		e := blocked("refused URL %q: invalid host: %v", raw, err)
		e.Details["url"] = raw
		e.Suggestion = "Give a full http:// or https:// URL with a valid host name."
		return e
	}
	if r := p.reservedMatch(h, u); r != nil {
		e := blocked("refused URL %q: it is an address of this proxy's own services, which no session may open", raw)
		e.Details["url"], e.Details["host"] = raw, h.name
		e.Suggestion = "Pages of the proxy itself (its API, the inspector, its browsers) are not for sessions; read the record with get_content and the session tools instead."
		return e
	}
	for _, m := range p.blocked {
		if m.match(h) {
			e := blocked("navigation to %s is blocked by PROXY_BLOCKED_DOMAINS (%s)", h.name, m.spec)
			e.Details["url"], e.Details["host"], e.Details["rule"] = raw, h.name, m.spec
			e.Suggestion = "This host is blocked on this server; choose another site."
			return e
		}
	}
	if len(p.allowed) == 0 {
		return nil
	}
	for _, m := range p.allowed {
		if m.match(h) {
			return nil
		}
	}
	e := blocked("navigation to %s is not allowed: it matches no entry of PROXY_ALLOWED_DOMAINS", h.name)
	e.Details["url"], e.Details["host"] = raw, h.name
	e.Suggestion = "Only these hosts may be opened: " + strings.Join(p.allowSpec, ", ") + "."
	return e
}

func (p *Policy) refuseScheme(raw, scheme string) *proxy.Error {
	e := blocked("refused URL with scheme %q: only http, https and about:blank may be opened", scheme)
	e.Details["url"], e.Details["scheme"] = raw, scheme
	e.Suggestion = "Give an http:// or https:// URL."
	return e
}

// cleanURL strips what a browser's URL parser strips: leading and trailing
// C0 controls and spaces, and every tab and newline.
func cleanURL(s string) string {
	s = strings.TrimFunc(s, func(r rune) bool { return r <= 0x20 })
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, s)
}

// normaliseHost turns a URL host (no port, no brackets) into the form the
// browser connects to.
func normaliseHost(s string) (host, error) {
	if s == "" {
		return host{}, fmt.Errorf("empty host")
	}
	if strings.Contains(s, ":") { // only IPv6 literals have colons here
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" {
			return host{}, fmt.Errorf("invalid IPv6 address %q", s)
		}
		a = a.Unmap()
		return host{name: a.String(), ip: a}, nil
	}
	// UTS #46 as browsers apply it: case folding, full-width and other
	// compatibility forms, then punycode.
	ascii, err := idna.Lookup.ToASCII(s)
	if err != nil {
		// idna rejects labels it would still map (e.g. "_"); browsers accept
		// them, so fall back to a plain lower-case ASCII comparison.
		if !isASCII(s) {
			return host{}, fmt.Errorf("invalid international domain name: %w", err)
		}
		ascii = strings.ToLower(s)
	}
	ascii = strings.TrimRight(strings.ToLower(ascii), ".")
	if ascii == "" {
		return host{}, fmt.Errorf("empty host")
	}
	if a, ok, err := parseIPv4(ascii); err != nil {
		return host{}, err
	} else if ok {
		return host{name: a.String(), ip: a}, nil
	}
	return host{name: ascii}, nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// parseIPv4 applies the WHATWG URL rules: a host whose last label is a
// number is an IPv4 address, written in 1-4 parts each decimal, octal
// (leading 0) or hex (0x), so 2130706433, 0x7f.1 and 127.1 are all
// 127.0.0.1. ok is false for ordinary names.
func parseIPv4(s string) (netip.Addr, bool, error) {
	parts := strings.Split(s, ".")
	last := parts[len(parts)-1]
	if !isNumber(last) {
		return netip.Addr{}, false, nil
	}
	if len(parts) > 4 {
		return netip.Addr{}, true, fmt.Errorf("invalid IPv4 address %q", s)
	}
	nums := make([]uint64, len(parts))
	for i, part := range parts {
		n, err := parseIPv4Number(part)
		if err != nil {
			return netip.Addr{}, true, fmt.Errorf("invalid IPv4 address %q", s)
		}
		nums[i] = n
	}
	for _, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, true, fmt.Errorf("invalid IPv4 address %q", s)
		}
	}
	lastN := nums[len(nums)-1]
	if lastN >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, true, fmt.Errorf("invalid IPv4 address %q", s)
	}
	v := lastN
	for i, n := range nums[:len(nums)-1] {
		v += n << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true, nil
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	if h, ok := strings.CutPrefix(s, "0x"); ok {
		for _, c := range h {
			if !strings.ContainsRune("0123456789abcdef", c) {
				return false
			}
		}
		return true
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func parseIPv4Number(s string) (uint64, error) {
	base := 10
	switch {
	case strings.HasPrefix(s, "0x"):
		s, base = s[2:], 16
		if s == "" {
			return 0, nil
		}
	case len(s) > 1 && s[0] == '0':
		s, base = s[1:], 8
	}
	return strconv.ParseUint(s, base, 64)
}

// upstreamArgs renders the lists as @playwright/mcp flags. Upstream turns a
// bare host into the glob *://host/**, which misses explicit ports, so each
// host also goes in as host:* .
func upstreamArgs(allowed, blocked []matcher, fileURLs bool) []string {
	render := func(ms []matcher) string {
		var out []string
		for _, m := range ms {
			if m.prefix.IsValid() || strings.Contains(m.spec, ":") {
				continue // CIDR and IPv6: no upstream glob form
			}
			out = append(out, m.spec, m.spec+":*")
		}
		return strings.Join(out, ";")
	}
	var args []string
	if s := render(allowed); s != "" {
		args = append(args, "--allowed-origins", s)
	}
	if s := render(blocked); s != "" {
		args = append(args, "--blocked-origins", s)
	}
	if fileURLs {
		// Upstream refuses file:// itself unless told otherwise.
		args = append(args, "--allow-unrestricted-file-access")
	}
	return args
}
