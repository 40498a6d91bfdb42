package bench

import (
	"fmt"
	"strconv"
	"strings"
)

// IntList is a flag.Value for a comma-separated list of non-negative
// integers: -levels 1,10,25.
type IntList []int

func (l *IntList) String() string {
	return strings.Trim(strings.Join(strings.Fields(fmt.Sprint(*l)), ","), "[]")
}

func (l *IntList) Set(s string) error {
	var out []int
	for part := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 0 {
			return fmt.Errorf("%q is not a list of non-negative integers", s)
		}
		out = append(out, n)
	}
	*l = out
	return nil
}

// PageList is a flag.Value for a comma-separated list of page names (see
// Pages), spaces allowed.
type PageList []string

func (l *PageList) String() string { return strings.Join(*l, ",") }

func (l *PageList) Set(s string) error {
	var out []string
	for part := range strings.SplitSeq(s, ",") {
		p := strings.TrimSpace(part)
		if _, ok := Pages[p]; !ok {
			return fmt.Errorf("%q: want form, table or catalogue", p)
		}
		out = append(out, p)
	}
	*l = out
	return nil
}
