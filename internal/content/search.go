package content

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// Search returns the lines of a playwright yaml snapshot that contain query,
// case-insensitively, each preceded by its yaml ancestors: the lines above
// it with less indentation that enclose it (`- generic [ref=e1]:` above
// `  - button "Go" [ref=e4]`), so that every element ref keeps its context.
// Lines keep their original bytes and order and none is repeated. No match
// gives ""; an empty query gives yamlText unchanged.
//
// Children of a matching line are not included: they are matches only if
// they contain the query themselves.
func Search(yamlText, query string) string {
	if query == "" {
		return yamlText
	}
	lq := strings.ToLower(query)
	lqb := []byte(lq)
	qASCII := isASCII(lq)
	// ASCII lines (nearly all of a snapshot) are lower-cased into one
	// reused buffer rather than through strings.ToLower, which would
	// allocate a copy of most lines. Only lines with other characters pay
	// for Unicode lower-casing.
	var scratch []byte

	type open struct {
		line    string
		indent  int
		emitted bool
	}
	var (
		b     strings.Builder
		stack []open // the enclosing lines of the current one, outermost first
	)
	for start := 0; start < len(yamlText); {
		end := strings.IndexByte(yamlText[start:], '\n')
		if end < 0 {
			end = len(yamlText)
		} else {
			end += start + 1
		}
		line := yamlText[start:end]
		body := strings.TrimRight(line, "\r\n")

		var match bool
		switch {
		case isASCII(body):
			if qASCII { // an ASCII line cannot contain a non-ASCII query
				scratch = asciiLower(scratch[:0], body)
				match = bytes.Contains(scratch, lqb)
			}
		default:
			match = strings.Contains(strings.ToLower(body), lq)
		}
		start = end

		indent := len(body) - len(strings.TrimLeft(body, " \t"))
		blank := indent == len(body)
		if !blank {
			// Whatever is not indented deeper than this line is not its
			// ancestor, nor will it be the ancestor of anything below.
			for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
				stack = stack[:len(stack)-1]
			}
		}
		if match {
			// Ancestors are emitted before the line, and any ancestor
			// already emitted was emitted before every line between it and
			// here, so the output stays in document order.
			for i := range stack {
				if !stack[i].emitted {
					b.WriteString(stack[i].line)
					stack[i].emitted = true
				}
			}
			b.WriteString(line)
		}
		if !blank {
			stack = append(stack, open{line: line, indent: indent, emitted: match})
		}
	}
	return b.String()
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// asciiLower appends s to dst with A-Z lower-cased.
func asciiLower(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}
