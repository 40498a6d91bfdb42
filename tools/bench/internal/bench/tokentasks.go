package bench

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The tasks of the tokens suite. Each writes out its three strategies: on
// plain+snapshot the agent reads pages with browser_snapshot (of one
// element when it already holds that element's ref); on plain+find it
// locates with browser_find and reads a small form whole with
// browser_snapshot (a form is filled from all its fields); on the proxy it
// reads what each answer says (a small new page inline, a large one's
// size, what an action changed) and searches with get_content. Every value
// the agent uses comes from an answer it received.

// shopTask: a list of products whose buttons all say "Add to cart".
type shopTask struct{}

func (shopTask) Name() string { return "shop" }
func (shopTask) Goal() string {
	return fmt.Sprintf("add Product %d to the cart (%d products, every button \"Add to cart\") and confirm the cart says 1 item", ShopTarget, ShopProducts)
}

var shopProduct = fmt.Sprintf("Product %d", ShopTarget)

const shopConfirm = "Cart: 1 item"

func (shopTask) Snapshot(ctx context.Context, a *agent) (string, error) {
	if _, err := a.navigate(ctx, "shop"); err != nil {
		return "", err
	}
	yaml, err := a.snapshot(ctx, "whole page")
	if err != nil {
		return "", err
	}
	btn, ok := ButtonNear(yaml, shopProduct)
	if !ok {
		return "", fmt.Errorf("no button beside %q in the snapshot", shopProduct)
	}
	cart, ok := firstRef(yaml, "status")
	if !ok {
		return "", fmt.Errorf("no cart status in the snapshot")
	}
	if _, err := a.click(ctx, btn, "Add to cart of "+shopProduct); err != nil {
		return "", err
	}
	text, err := a.snapshotOf(ctx, cart, "the cart line")
	if err != nil {
		return "", err
	}
	return confirmed(text, shopConfirm)
}

func (shopTask) Find(ctx context.Context, a *agent) (string, error) {
	if _, err := a.navigate(ctx, "shop"); err != nil {
		return "", err
	}
	text, err := a.find(ctx, shopProduct)
	if err != nil {
		return "", err
	}
	btn, ok := ButtonNear(text, shopProduct)
	if !ok {
		return "", fmt.Errorf("no button beside %q in what browser_find returned", shopProduct)
	}
	if _, err := a.click(ctx, btn, "Add to cart of "+shopProduct); err != nil {
		return "", err
	}
	if text, err = a.find(ctx, "Cart:"); err != nil {
		return "", err
	}
	return confirmed(text, shopConfirm)
}

func (shopTask) Proxy(ctx context.Context, a *agent) (string, error) {
	text, err := a.navigate(ctx, "shop")
	if err != nil {
		return "", err
	}
	p, err := proxyAnswer(text)
	if err != nil {
		return "", err
	}
	found, err := a.search(ctx, p.RefID, shopProduct)
	if err != nil {
		return "", err
	}
	// The search shows the product with its neighbourhood: its button.
	btn, ok := ButtonNear(found, shopProduct)
	if !ok {
		return "", fmt.Errorf("no button beside %q in the search answer", shopProduct)
	}
	if text, err = a.click(ctx, btn, "Add to cart of "+shopProduct); err != nil {
		return "", err
	}
	if strings.Contains(text, shopConfirm) {
		return shopConfirm, nil
	}
	// The answer did not show the cart line: search for it.
	if p, err = proxyAnswer(text); err != nil {
		return "", err
	}
	if text, err = a.search(ctx, p.RefID, "Cart:"); err != nil {
		return "", err
	}
	return confirmed(text, shopConfirm)
}

func (shopTask) Verify(ctx context.Context, site *Site, run, found string) (string, error) {
	var rec RunRecord
	// The page posts the cart after the click answered: wait for it a
	// little (the site's record, not a tool call).
	for i := 0; i < 40; i++ {
		if rec = site.Record(run); len(rec.Cart) > 0 {
			break
		}
		if err := sleepCtx(ctx, 100*time.Millisecond); err != nil {
			return "", err
		}
	}
	got := fmt.Sprintf("the site's cart: %v; the agent saw %q", rec.Cart, found)
	if !slices.Equal(rec.Cart, []int{ShopTarget}) {
		return got, fmt.Errorf("the cart holds %v, want [%d]", rec.Cart, ShopTarget)
	}
	return got, nil
}

// ordersTask: sign in, then one cell of a large table.
type ordersTask struct{}

func (ordersTask) Name() string { return "orders" }
func (ordersTask) Goal() string {
	return fmt.Sprintf("sign in as %s, then read the total of order ORD-%d in a %d-row table", SignInUser, OrderTarget, OrderRows)
}

var signInFields = []formField{
	{"textbox", "Username", "textbox", SignInUser},
	{"textbox", "Password", "textbox", SignInPassword},
}

var orderID = fmt.Sprintf("ORD-%d", OrderTarget)

// signIn fills and submits the sign-in form read off yaml and returns the
// submit's answer.
func signIn(ctx context.Context, a *agent, yaml string) (string, error) {
	if _, err := a.fill(ctx, yaml, signInFields); err != nil {
		return "", err
	}
	submit, ok := ElementRef(yaml, "button", "Sign in")
	if !ok {
		return "", fmt.Errorf(`no button "Sign in" in what the agent read`)
	}
	return a.click(ctx, submit, "Sign in")
}

func (ordersTask) Snapshot(ctx context.Context, a *agent) (string, error) {
	if _, err := a.navigate(ctx, "signin"); err != nil {
		return "", err
	}
	yaml, err := a.snapshot(ctx, "the sign-in form")
	if err != nil {
		return "", err
	}
	if _, err := signIn(ctx, a, yaml); err != nil {
		return "", err
	}
	if yaml, err = a.snapshot(ctx, "the orders page"); err != nil {
		return "", err
	}
	return rowTotal(yaml, orderID)
}

func (ordersTask) Find(ctx context.Context, a *agent) (string, error) {
	if _, err := a.navigate(ctx, "signin"); err != nil {
		return "", err
	}
	yaml, err := a.snapshot(ctx, "the sign-in form")
	if err != nil {
		return "", err
	}
	if _, err := signIn(ctx, a, yaml); err != nil {
		return "", err
	}
	text, err := a.find(ctx, orderID)
	if err != nil {
		return "", err
	}
	return rowTotal(text, orderID)
}

func (ordersTask) Proxy(ctx context.Context, a *agent) (string, error) {
	text, err := a.navigate(ctx, "signin")
	if err != nil {
		return "", err
	}
	p, err := proxyAnswer(text)
	if err != nil {
		return "", err
	}
	yaml, err := a.proxyPage(ctx, p)
	if err != nil {
		return "", err
	}
	if text, err = signIn(ctx, a, yaml); err != nil {
		return "", err
	}
	if p, err = proxyAnswer(text); err != nil {
		return "", err
	}
	if yaml, ok := inlineSnapshot(p); ok {
		return rowTotal(yaml, orderID)
	}
	found, err := a.search(ctx, p.RefID, orderID)
	if err != nil {
		return "", err
	}
	return rowTotal(found, orderID) // the search shows the row's cells
}

func (ordersTask) Verify(_ context.Context, site *Site, run, found string) (string, error) {
	rec := site.Record(run)
	want := OrderAt(OrderTarget).Total
	got := fmt.Sprintf("sign-ins %v, signed in %v, orders pages served %d; the agent read %q (the table says %q)",
		rec.SignIns, rec.SignedIn, rec.OrdersServed, found, want)
	switch {
	case !rec.SignedIn || rec.OrdersServed == 0:
		return got, fmt.Errorf("the site saw no successful sign-in followed by the orders page")
	case found != want:
		return got, fmt.Errorf("the agent read %q, the table says %q", found, want)
	}
	return got, nil
}

// contactTask: fill a form, submit, confirm.
type contactTask struct{}

func (contactTask) Name() string { return "contact" }
func (contactTask) Goal() string {
	return fmt.Sprintf("fill the contact form's %d fields, submit, and confirm the confirmation page", len(contactForm))
}

var contactForm = []formField{
	{"textbox", "Full name", "textbox", ContactValues["name"]},
	{"textbox", "Email", "textbox", ContactValues["email"]},
	{"combobox", "Topic", "combobox", ContactValues["topic"]},
	{"textbox", "Order number", "textbox", ContactValues["order"]},
	{"textbox", "Message", "textbox", ContactValues["message"]},
	{"checkbox", "Send me a copy", "checkbox", "true"},
}

const contactConfirm = "we received your message"

// submitContact fills the form read off yaml and submits it.
func submitContact(ctx context.Context, a *agent, yaml string) (string, error) {
	if _, err := a.fill(ctx, yaml, contactForm); err != nil {
		return "", err
	}
	submit, ok := ElementRef(yaml, "button", "Send message")
	if !ok {
		return "", fmt.Errorf(`no button "Send message" in what the agent read`)
	}
	return a.click(ctx, submit, "Send message")
}

func (contactTask) Snapshot(ctx context.Context, a *agent) (string, error) {
	if _, err := a.navigate(ctx, "contact"); err != nil {
		return "", err
	}
	yaml, err := a.snapshot(ctx, "the form")
	if err != nil {
		return "", err
	}
	if _, err := submitContact(ctx, a, yaml); err != nil {
		return "", err
	}
	if yaml, err = a.snapshot(ctx, "the confirmation"); err != nil {
		return "", err
	}
	return confirmed(yaml, contactConfirm)
}

func (contactTask) Find(ctx context.Context, a *agent) (string, error) {
	if _, err := a.navigate(ctx, "contact"); err != nil {
		return "", err
	}
	yaml, err := a.snapshot(ctx, "the form")
	if err != nil {
		return "", err
	}
	if _, err := submitContact(ctx, a, yaml); err != nil {
		return "", err
	}
	text, err := a.find(ctx, contactConfirm)
	if err != nil {
		return "", err
	}
	return confirmed(text, contactConfirm)
}

func (contactTask) Proxy(ctx context.Context, a *agent) (string, error) {
	text, err := a.navigate(ctx, "contact")
	if err != nil {
		return "", err
	}
	p, err := proxyAnswer(text)
	if err != nil {
		return "", err
	}
	yaml, err := a.proxyPage(ctx, p)
	if err != nil {
		return "", err
	}
	if text, err = submitContact(ctx, a, yaml); err != nil {
		return "", err
	}
	if strings.Contains(text, contactConfirm) {
		return contactConfirm, nil
	}
	if p, err = proxyAnswer(text); err != nil {
		return "", err
	}
	if text, err = a.search(ctx, p.RefID, contactConfirm); err != nil {
		return "", err
	}
	return confirmed(text, contactConfirm)
}

func (contactTask) Verify(_ context.Context, site *Site, run, found string) (string, error) {
	rec := site.Record(run)
	got := fmt.Sprintf("the site received %v; the agent saw %q", rec.Contact, found)
	if rec.Contact == nil {
		return got, fmt.Errorf("the site received no contact form")
	}
	for k, want := range ContactValues {
		if v := rec.Contact.Get(k); v != want {
			return got, fmt.Errorf("field %s = %q, want %q", k, v, want)
		}
	}
	return got, nil
}

// articleTask: one sentence in a long article.
type articleTask struct{}

func (articleTask) Name() string { return "article" }
func (articleTask) Goal() string {
	return fmt.Sprintf("find the %s keeper's passphrase in a long article (one sentence mentions it)", ArticleKeyword)
}

var passphraseRE = regexp.MustCompile(`passphrase is ([A-Z0-9][A-Z0-9-]*[A-Z0-9])`)

func passphrase(text string) (string, error) {
	m := passphraseRE.FindStringSubmatch(text)
	if m == nil {
		return "", fmt.Errorf("no passphrase in what the agent read")
	}
	return m[1], nil
}

func (articleTask) Snapshot(ctx context.Context, a *agent) (string, error) {
	if _, err := a.navigate(ctx, "article"); err != nil {
		return "", err
	}
	yaml, err := a.snapshot(ctx, "whole page")
	if err != nil {
		return "", err
	}
	return passphrase(yaml)
}

func (articleTask) Find(ctx context.Context, a *agent) (string, error) {
	if _, err := a.navigate(ctx, "article"); err != nil {
		return "", err
	}
	text, err := a.find(ctx, ArticleKeyword)
	if err != nil {
		return "", err
	}
	return passphrase(text)
}

func (articleTask) Proxy(ctx context.Context, a *agent) (string, error) {
	text, err := a.navigate(ctx, "article")
	if err != nil {
		return "", err
	}
	p, err := proxyAnswer(text)
	if err != nil {
		return "", err
	}
	if yaml, ok := inlineSnapshot(p); ok {
		return passphrase(yaml)
	}
	if text, err = a.search(ctx, p.RefID, ArticleKeyword); err != nil {
		return "", err
	}
	return passphrase(text)
}

func (articleTask) Verify(_ context.Context, _ *Site, _, found string) (string, error) {
	got := fmt.Sprintf("the agent read %q (the article says %q)", found, ArticleCode)
	if found != ArticleCode {
		return got, fmt.Errorf("the agent read %q, want %q", found, ArticleCode)
	}
	return got, nil
}

// linkTask: follow a link to a second page and read a value there.
type linkTask struct{}

func (linkTask) Name() string { return "link" }
func (linkTask) Goal() string {
	return fmt.Sprintf("on the account page (%d links), follow the link to the parcel page and read the tracking number", len(accountLinks))
}

const (
	linkWord   = "parcel"
	valueLabel = "Tracking number"
)

func (linkTask) Snapshot(ctx context.Context, a *agent) (string, error) {
	if _, err := a.navigate(ctx, "account"); err != nil {
		return "", err
	}
	yaml, err := a.snapshot(ctx, "whole page")
	if err != nil {
		return "", err
	}
	link, ok := refByNameContains(yaml, "link", linkWord)
	if !ok {
		return "", fmt.Errorf("no link about %q in the snapshot", linkWord)
	}
	if _, err := a.click(ctx, link, "the parcel link"); err != nil {
		return "", err
	}
	if yaml, err = a.snapshot(ctx, "the parcel page"); err != nil {
		return "", err
	}
	return valueAfter(yaml, valueLabel)
}

func (linkTask) Find(ctx context.Context, a *agent) (string, error) {
	if _, err := a.navigate(ctx, "account"); err != nil {
		return "", err
	}
	text, err := a.find(ctx, linkWord)
	if err != nil {
		return "", err
	}
	link, ok := refByNameContains(text, "link", linkWord)
	if !ok {
		return "", fmt.Errorf("no link about %q in what browser_find returned", linkWord)
	}
	if _, err := a.click(ctx, link, "the parcel link"); err != nil {
		return "", err
	}
	if text, err = a.find(ctx, valueLabel); err != nil {
		return "", err
	}
	return valueAfter(text, valueLabel)
}

func (linkTask) Proxy(ctx context.Context, a *agent) (string, error) {
	text, err := a.navigate(ctx, "account")
	if err != nil {
		return "", err
	}
	p, err := proxyAnswer(text)
	if err != nil {
		return "", err
	}
	var page string
	if yaml, ok := inlineSnapshot(p); ok {
		page = yaml
	} else if page, err = a.search(ctx, p.RefID, linkWord); err != nil {
		return "", err
	}
	link, ok := refByNameContains(page, "link", linkWord)
	if !ok {
		return "", fmt.Errorf("no link about %q in what the agent read", linkWord)
	}
	if text, err = a.click(ctx, link, "the parcel link"); err != nil {
		return "", err
	}
	if p, err = proxyAnswer(text); err != nil {
		return "", err
	}
	if yaml, ok := inlineSnapshot(p); ok {
		return valueAfter(yaml, valueLabel)
	}
	found, err := a.search(ctx, p.RefID, valueLabel)
	if err != nil {
		return "", err
	}
	return valueAfter(found, valueLabel) // the search shows the value beside its label
}

func (linkTask) Verify(_ context.Context, site *Site, run, found string) (string, error) {
	rec := site.Record(run)
	got := fmt.Sprintf("parcel page fetched %d time(s); the agent read %q (the page says %q)", rec.Fetched["parcel"], found, ParcelTracking)
	switch {
	case rec.Fetched["parcel"] == 0:
		return got, fmt.Errorf("the site never served the parcel page")
	case found != ParcelTracking:
		return got, fmt.Errorf("the agent read %q, want %q", found, ParcelTracking)
	}
	return got, nil
}

// consoleTask: diagnose a page's console errors among info and warn noise.
type consoleTask struct{}

func (consoleTask) Name() string { return "console" }
func (consoleTask) Goal() string {
	return "open the dashboard and report its console errors (among info and warning noise)"
}

// plainConsole is the strategy of both plain sides: the console has no
// snapshot, so reading it is the same with either.
func plainConsole(ctx context.Context, a *agent) (string, error) {
	if _, err := a.navigate(ctx, "dashboard"); err != nil {
		return "", err
	}
	text, err := a.call(ctx, "browser_console_messages", "level error", map[string]any{"level": "error"})
	if err != nil {
		return "", err
	}
	return consoleErrors(text)
}

func (consoleTask) Snapshot(ctx context.Context, a *agent) (string, error) {
	return plainConsole(ctx, a)
}
func (consoleTask) Find(ctx context.Context, a *agent) (string, error) { return plainConsole(ctx, a) }

func (consoleTask) Proxy(ctx context.Context, a *agent) (string, error) {
	text, err := a.navigate(ctx, "dashboard")
	if err != nil {
		return "", err
	}
	p, err := proxyAnswer(text)
	if err != nil {
		return "", err
	}
	// The answer carries a few errors itself; only more than it shows
	// need a read.
	if errs := answerErrors(text); len(errs) > 0 && len(errs) == p.ConsoleErrors {
		return strings.Join(errs, "\n"), nil
	}
	if text, err = a.call(ctx, "get_console_content", "level error", map[string]any{"ref_id": p.RefID, "level": "error"}); err != nil {
		return "", err
	}
	return consoleErrors(text)
}

// answerErrorRE is one console error of a proxy answer: "! message", or
// "! message @ url:line" when another script logged it.
var answerErrorRE = regexp.MustCompile(`(?m)^! (.*?)(?: @ \S+:\d+)?$`)

// answerErrors are the console errors a proxy answer shows, without where
// they were logged; none when the answer says there are more.
func answerErrors(text string) []string {
	if strings.Contains(text, " more: get_console_content") {
		return nil
	}
	var out []string
	for _, m := range answerErrorRE.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

func (consoleTask) Verify(_ context.Context, _ *Site, _, found string) (string, error) {
	got := strings.Split(found, "\n")
	desc := fmt.Sprintf("the agent reported %d error(s): %q", len(got), got)
	if !slices.Equal(got, ConsoleErrors) {
		return desc, fmt.Errorf("the agent reported %q, want %q", got, ConsoleErrors)
	}
	return desc, nil
}

// consoleLineRE is one error of a console listing: "[ERROR] message @
// url:line" (upstream's format, which the proxy keeps).
var consoleLineRE = regexp.MustCompile(`(?m)^\[ERROR\] (.*?)(?: @ \S+)?$`)

// consoleErrors returns the error messages of a console listing, one a
// line.
func consoleErrors(text string) (string, error) {
	var out []string
	for _, m := range consoleLineRE.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	if len(out) == 0 {
		return "", fmt.Errorf("no error in the console listing the agent read")
	}
	return strings.Join(out, "\n"), nil
}

// confirmed says whether the agent saw want in what it read.
func confirmed(text, want string) (string, error) {
	if !strings.Contains(text, want) {
		if len(text) > 300 {
			text = text[:300] + "…"
		}
		return "", fmt.Errorf("the agent did not see %q in %q", want, text)
	}
	return want, nil
}

// snapNode is one element or text line of an aria snapshot, with the text
// after its colon.
type snapNode struct {
	indent  int
	role    string
	name    string
	hasName bool
	ref     string
	text    string
}

// snapNodeRE: indentation, "- ", role, optional quoted name, attributes in
// brackets, then optionally ": text".
var snapNodeRE = regexp.MustCompile(`^( *)- ([A-Za-z/][\w/-]*)(?: ("(?:[^"\\]|\\.)*"))?((?: \[[^\]]*\])*)(?::(?: (.*))?)?$`)

func parseNodes(yaml string) []snapNode {
	var out []snapNode
	for _, line := range strings.Split(yaml, "\n") {
		m := snapNodeRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n := snapNode{indent: len(m[1]), role: m[2], text: strings.TrimSpace(m[5])}
		if m[3] != "" {
			name, err := strconv.Unquote(m[3])
			if err != nil {
				continue
			}
			n.name, n.hasName = name, true
		}
		if r := snapRefRE.FindStringSubmatch(m[4]); r != nil {
			n.ref = r[1]
		}
		if strings.HasPrefix(n.text, `"`) {
			if t, err := strconv.Unquote(n.text); err == nil {
				n.text = t
			}
		}
		out = append(out, n)
	}
	return out
}

// label is what a node says: its name, or its text.
func (n snapNode) label() string {
	if n.hasName {
		return n.name
	}
	return n.text
}

// firstRef is the ref of the first element with this role.
func firstRef(yaml, role string) (string, bool) {
	for _, n := range parseNodes(yaml) {
		if n.role == role && n.ref != "" {
			return n.ref, true
		}
	}
	return "", false
}

// refByNameContains is the ref of the first element of this role whose
// name contains sub (case-insensitive).
func refByNameContains(yaml, role, sub string) (string, bool) {
	sub = strings.ToLower(sub)
	for _, n := range parseNodes(yaml) {
		if n.role == role && n.ref != "" && strings.Contains(strings.ToLower(n.name), sub) {
			return n.ref, true
		}
	}
	return "", false
}

// valueAfter is what the node after the one that says label says, at the
// same depth: the definition after its term, the cell after its header;
// or, in the proxy's outline of a description list, the value on the
// label's own line ("- Tracking number: NW-48213-7730").
func valueAfter(yaml, label string) (string, error) {
	nodes := parseNodes(yaml)
	for _, line := range strings.Split(yaml, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "- "+label+": "); ok && v != "" {
			return v, nil
		}
	}
	for i, n := range nodes {
		if n.label() != label {
			continue
		}
		for _, m := range nodes[i+1:] {
			if m.indent < n.indent {
				break
			}
			if m.indent == n.indent {
				if v := m.label(); v != "" {
					return v, nil
				}
				break
			}
		}
	}
	return "", fmt.Errorf("no value after %q in what the agent read", label)
}

var moneyRE = regexp.MustCompile(`^€\d+\.\d\d$`)

// rowTotal is the amount in the table row whose cell says id: the row's
// only money cell.
func rowTotal(yaml, id string) (string, error) {
	nodes := parseNodes(yaml)
	for i, n := range nodes {
		if n.label() != id {
			continue
		}
		// The row's cells are n's siblings, before and after it.
		start, end := i, i+1
		for start > 0 && nodes[start-1].indent >= n.indent {
			start--
		}
		for end < len(nodes) && nodes[end].indent >= n.indent {
			end++
		}
		for _, m := range nodes[start:end] {
			if m.indent == n.indent && moneyRE.MatchString(m.label()) {
				return m.label(), nil
			}
		}
	}
	return "", fmt.Errorf("no total beside %q in what the agent read", id)
}
