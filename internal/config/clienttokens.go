package config

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
)

// ClientToken is one line of PROXY_CLIENT_TOKENS_FILE: a token that opens
// only the MCP surfaces, acting as a client of its own.
type ClientToken struct {
	// Name identifies the token in logs and errors; the token itself is
	// never printed.
	Name  string
	Token string
	// Line is where the token is in the file.
	Line int
}

// Bounds of a client token. A token is a password for a machine: long
// and random, written with characters that survive a shell, a header and
// a file (base64, base64url, hex).
const (
	MinClientTokenLen = 32
	maxClientTokenLen = 512
	// minDistinct turns away what is long but not random ("aaaa…",
	// "abababab…"); 32 random hex digits have about 15 distinct ones.
	minDistinct = 10
)

var (
	tokenName  = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)
	tokenChars = regexp.MustCompile(`^[A-Za-z0-9._~+/=-]+$`)
)

// ParseClientTokens reads client tokens, one a line: "TOKEN" or
// "NAME TOKEN", separated by white space. Blank lines and lines starting
// with # are skipped, and " #" starts a comment at the end of a line. A
// token without a name is named client-LINE. An error names the line and
// never quotes the token.
func ParseClientTokens(r io.Reader) ([]ClientToken, error) {
	var out []ClientToken
	tokenLine := map[string]int{}
	nameLine := map[string]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4<<10), 64<<10)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		for i, f := range fields {
			if strings.HasPrefix(f, "#") {
				fields = fields[:i]
				break
			}
		}
		var t ClientToken
		switch len(fields) {
		case 0:
			continue
		case 1:
			t = ClientToken{Name: fmt.Sprintf("client-%d", n), Token: fields[0], Line: n}
		case 2:
			t = ClientToken{Name: fields[0], Token: fields[1], Line: n}
			if !tokenName.MatchString(t.Name) {
				return nil, fmt.Errorf("line %d: a name is 1 to 64 characters A-Z, a-z, 0-9, '.', '_' or '-'", n)
			}
		default:
			return nil, fmt.Errorf("line %d: want TOKEN or NAME TOKEN, got %d words", n, len(fields))
		}
		if err := checkClientToken(t.Token); err != nil {
			return nil, fmt.Errorf("line %d (%s): %w", n, t.Name, err)
		}
		if prev, dup := tokenLine[t.Token]; dup {
			return nil, fmt.Errorf("line %d (%s): the same token as line %d", n, t.Name, prev)
		}
		if prev, dup := nameLine[t.Name]; dup {
			return nil, fmt.Errorf("line %d: the name %s is already used on line %d", n, t.Name, prev)
		}
		tokenLine[t.Token], nameLine[t.Name] = n, n
		out = append(out, t)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("a line is longer than %d bytes", 64<<10)
		}
		return nil, err
	}
	return out, nil
}

// checkClientToken turns away tokens that could be guessed.
func checkClientToken(tok string) error {
	switch {
	case len(tok) < MinClientTokenLen:
		return fmt.Errorf("the token is shorter than %d characters (make one with: openssl rand -hex 32)", MinClientTokenLen)
	case len(tok) > maxClientTokenLen:
		return fmt.Errorf("the token is longer than %d characters", maxClientTokenLen)
	case !tokenChars.MatchString(tok):
		return errors.New("the token has characters other than A-Z, a-z, 0-9 and . _ ~ + / = -")
	}
	distinct := map[rune]bool{}
	for _, r := range tok {
		distinct[r] = true
	}
	if len(distinct) < minDistinct {
		return fmt.Errorf("the token is weak: fewer than %d different characters (make one with: openssl rand -hex 32)", minDistinct)
	}
	return nil
}

// LoadClientTokens reads the client tokens file at path.
func LoadClientTokens(path string) ([]ClientToken, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading client tokens: %w", err)
	}
	defer f.Close()
	toks, err := ParseClientTokens(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return toks, nil
}

// ClientTokens reads PROXY_CLIENT_TOKENS_FILE (none when unset) and checks
// that no client token is the operator's.
func (c Config) ClientTokens() ([]ClientToken, error) {
	if c.ClientTokensFile == "" {
		return nil, nil
	}
	toks, err := LoadClientTokens(c.ClientTokensFile)
	if err != nil {
		return nil, err
	}
	for _, t := range toks {
		if t.Token == c.AuthToken {
			return nil, fmt.Errorf("%s: line %d (%s): the same token as PROXY_AUTH_TOKEN; a client token must not open the operator's views", c.ClientTokensFile, t.Line, t.Name)
		}
	}
	return toks, nil
}
