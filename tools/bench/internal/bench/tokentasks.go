package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

type tokensTask struct {
	name, goal string
	do         func(ctx context.Context, a *agent) (string, error)
	verify     func(ctx context.Context, site *Site, run, found string) (string, error)
}

var (
	shopProduct = fmt.Sprintf("Product %d", ShopTarget)
	orderID     = fmt.Sprintf("ORD-%d", OrderTarget)
)

const (
	shopConfirm    = "Cart: 1 item"
	contactConfirm = "we received your message"
	linkWord       = "parcel"
	valueLabel     = "Tracking number"
	windowLabel    = "Delivery window"
)

var signInFields = []formField{{"textbox", "Username", SignInUser}, {"textbox", "Password", SignInPassword}}

var contactForm = []formField{
	{"textbox", "Full name", ContactValues["name"]},
	{"textbox", "Email", ContactValues["email"]},
	{"combobox", "Topic", ContactValues["topic"]},
	{"textbox", "Order number", ContactValues["order"]},
	{"textbox", "Message", ContactValues["message"]},
	{"checkbox", "Send me a copy", "true"},
}

var stockFunction = fmt.Sprintf(`() => { const card = [...document.querySelectorAll('article')].find(a => a.querySelector('h3').textContent === 'Product %d'); `+
	`const v = l => [...card.querySelectorAll('dt')].find(d => d.textContent === l).nextElementSibling.textContent; `+
	`return { price: v('Price'), stock: v('In stock'), sku: v('SKU') }; }`, StockTarget)

func steps(s string, fs ...func(string) (string, error)) (string, error) {
	var err error
	for _, f := range fs {
		if s, err = f(s); err != nil {
			return "", err
		}
	}
	return s, nil
}

func tokensSuite() []tokensTask {
	return []tokensTask{
		{name: "shop", goal: fmt.Sprintf("add Product %d to the cart (%d products, every button \"Add to cart\") and confirm the cart says 1 item", ShopTarget, ShopProducts),
			do: func(ctx context.Context, a *agent) (string, error) {
				var cart string // plain+snapshot reads the cart line alone after the click
				return steps("shop", func(p string) (string, error) { return a.open(ctx, p) },
					func(string) (string, error) { return a.look(ctx, shopProduct, "whole page") },
					func(text string) (string, error) {
						btn, ok := ButtonNear(text, shopProduct)
						if cart, _ = firstRef(text, "status"); !ok || (cart == "" && a.side == SideSnapshot) {
							return "", fmt.Errorf("no button beside %q or no cart status in what the agent read", shopProduct)
						}
						return a.click(ctx, btn, "Add to cart of "+shopProduct)
					},
					func(string) (string, error) { return a.confirm(ctx, "Cart:", shopConfirm, "the cart line", cart) })
			},
			verify: func(ctx context.Context, site *Site, run, found string) (string, error) {
				var rec RunRecord
				// The page posts the cart after the click answered.
				for i := 0; i < 40; i++ {
					if rec = site.Record(run); len(rec.Cart) > 0 {
						break
					}
					if err := sleepCtx(ctx, 100*time.Millisecond); err != nil {
						return "", err
					}
				}
				return check(fmt.Sprintf("the site's cart: %v; the agent saw %q", rec.Cart, found),
					slices.Equal(rec.Cart, []int{ShopTarget}), "the cart holds %v, want [%d]", rec.Cart, ShopTarget)
			}},
		{name: "orders", goal: fmt.Sprintf("sign in as %s, then read the total of order ORD-%d in a %d-row table", SignInUser, OrderTarget, OrderRows),
			do: func(ctx context.Context, a *agent) (string, error) {
				return steps("signin", func(p string) (string, error) { return a.open(ctx, p) },
					func(string) (string, error) { return a.page(ctx, "the sign-in form") },
					func(yaml string) (string, error) { return a.fillAndClick(ctx, yaml, signInFields, "Sign in") },
					func(string) (string, error) { return a.look(ctx, orderID, "the orders page") },
					func(text string) (string, error) { return rowTotal(text, orderID) })
			},
			verify: func(_ context.Context, site *Site, run, found string) (string, error) {
				rec, want := site.Record(run), OrderAt(OrderTarget).Total
				got := fmt.Sprintf("sign-ins %v, signed in %v, orders pages served %d; the agent read %q (the table says %q)", rec.SignIns, rec.SignedIn, rec.OrdersServed, found, want)
				if !rec.SignedIn || rec.OrdersServed == 0 {
					return got, fmt.Errorf("the site saw no successful sign-in followed by the orders page")
				}
				return check(got, found == want, "the agent read %q, the table says %q", found, want)
			}},
		{name: "contact", goal: fmt.Sprintf("fill the contact form's %d fields, submit, and confirm the confirmation page", len(contactForm)),
			do: func(ctx context.Context, a *agent) (string, error) {
				return steps("contact", func(p string) (string, error) { return a.open(ctx, p) },
					func(string) (string, error) { return a.page(ctx, "the form") },
					func(yaml string) (string, error) { return a.fillAndClick(ctx, yaml, contactForm, "Send message") },
					func(string) (string, error) {
						return a.confirm(ctx, contactConfirm, contactConfirm, "the confirmation", "")
					})
			},
			verify: func(_ context.Context, site *Site, run, found string) (string, error) {
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
			}},
		{name: "article", goal: fmt.Sprintf("find the %s keeper's passphrase in a long article (one sentence mentions it)", ArticleKeyword),
			do: func(ctx context.Context, a *agent) (string, error) {
				return steps("article", func(p string) (string, error) { return a.open(ctx, p) },
					func(string) (string, error) { return a.look(ctx, ArticleKeyword, "whole page") }, passphrase)
			},
			verify: equals("the article says", ArticleCode)},
		{name: "link", goal: fmt.Sprintf("on the account page (%d links), follow the link to the parcel page and read the tracking number", len(accountLinks)),
			do: func(ctx context.Context, a *agent) (string, error) {
				return steps("account", func(p string) (string, error) { return a.open(ctx, p) },
					func(string) (string, error) { return a.look(ctx, linkWord, "whole page") },
					func(text string) (string, error) {
						link, ok := refByNameContains(text, "link", linkWord)
						if !ok {
							return "", fmt.Errorf("no link about %q in what the agent read", linkWord)
						}
						return a.click(ctx, link, "the parcel link")
					},
					func(string) (string, error) { return a.look(ctx, valueLabel, "the parcel page") },
					func(text string) (string, error) { return valueAfter(text, valueLabel) })
			},
			verify: func(_ context.Context, site *Site, run, found string) (string, error) {
				n := site.Record(run).Fetched["parcel"]
				got := fmt.Sprintf("parcel page fetched %d time(s); the agent read %q (the page says %q)", n, found, ParcelTracking)
				if n == 0 {
					return got, fmt.Errorf("the site never served the parcel page")
				}
				return check(got, found == ParcelTracking, "the agent read %q, want %q", found, ParcelTracking)
			}},
		{name: "console", goal: "open the dashboard and report its console errors (among info and warning noise)",
			do: func(ctx context.Context, a *agent) (string, error) {
				text, err := a.open(ctx, "dashboard")
				if err != nil {
					return "", err
				}
				args := map[string]any{"level": "error"}
				tool := "browser_console_messages" // the console has no snapshot: both plain sides read it so
				if a.side == SideProxy {
					p, err := proxyAnswer(text)
					if err != nil {
						return "", err
					}
					// The answer carries a few errors itself; only more
					// than it shows need a read.
					if errs := answerErrors(text); len(errs) > 0 && len(errs) == p.ConsoleErrors {
						return strings.Join(errs, "\n"), nil
					}
					tool, args["ref_id"] = "get_console_content", p.RefID
				}
				if text, err = a.call(ctx, tool, "level error", args); err != nil {
					return "", err
				}
				return consoleErrors(text)
			},
			verify: func(_ context.Context, _ *Site, _, found string) (string, error) {
				got := strings.Split(found, "\n")
				return check(fmt.Sprintf("the agent reported %d error(s): %q", len(got), got),
					slices.Equal(got, ConsoleErrors), "the agent reported %q, want %q", got, ConsoleErrors)
			}},
		{name: "evaluate", goal: fmt.Sprintf("read the price, the count in stock and the SKU of Product %d on a stock list of %d cards, with browser_evaluate", StockTarget, StockProducts),
			do: func(ctx context.Context, a *agent) (string, error) {
				text, err := steps("stock", func(p string) (string, error) { return a.open(ctx, p) }, func(string) (string, error) {
					return a.call(ctx, "browser_evaluate", "three values", map[string]any{"function": stockFunction})
				})
				if err != nil {
					return "", err
				}
				js, err := EvaluateResult(text)
				if a.side == SideProxy {
					p, perr := proxyAnswer(text)
					if js, err = p.Result, perr; err == nil && js == "" {
						err = fmt.Errorf("the answer carries no result: %q", text)
					}
				}
				if err != nil {
					return "", err
				}
				var v struct{ Price, Stock, SKU string }
				if err := json.Unmarshal([]byte(js), &v); err != nil {
					return "", fmt.Errorf("the evaluated value %q: %w", js, err)
				}
				return v.Price + " " + v.Stock + " " + v.SKU, nil
			},
			verify: func(ctx context.Context, site *Site, run, found string) (string, error) {
				price, stock, sku := StockValues(StockTarget)
				return equals("the page says", price+" "+stock+" "+sku)(ctx, site, run, found)
			}},
		{name: "tabs", goal: "on the delivery page, open the carrier's tracking page in a second tab, read the delivery window there, go back to the first tab and confirm that window",
			do: tabsTask, verify: verifyTabs},
	}
}

// tabsTask reads a value in a second tab and acts on it in the first. The
// proxy keeps the delivery page read off its navigate answer: the refs it
// read on the first tab still hold there.
func tabsTask(ctx context.Context, a *agent) (string, error) {
	var delivery string
	window, err := steps("delivery", func(p string) (string, error) { return a.open(ctx, p) },
		func(string) (_ string, err error) {
			if a.side == SideProxy {
				delivery, err = a.page(ctx, "")
			}
			return "", err
		},
		func(string) (string, error) {
			return a.act(ctx, "browser_tabs", "new: the carrier's page", map[string]any{"action": "new", "url": a.site.TokenURL(a.run, "carrier")})
		},
		func(string) (string, error) { return a.look(ctx, windowLabel, "the carrier's page") },
		func(text string) (string, error) { return valueAfter(text, windowLabel) })
	if err != nil {
		return "", err
	}
	text, err := a.act(ctx, "browser_tabs", "select the first tab", map[string]any{"action": "select", "index": 0})
	if err != nil {
		return "", err
	}
	button := "Confirm " + window
	if a.side != SideProxy {
		delivery, err = a.look(ctx, button, "the delivery page")
	} else if p, perr := proxyAnswer(text); perr != nil {
		err = perr
	} else if yaml, ok := inlineSnapshot(p); ok {
		delivery = yaml // the tab as it is now
	}
	if err != nil {
		return "", err
	}
	ref, ok := refByNameContains(delivery, "button", button)
	if !ok {
		return "", fmt.Errorf("no button %q in what the agent read", button)
	}
	_, err = a.click(ctx, ref, button)
	return window, err
}

func verifyTabs(_ context.Context, site *Site, run, found string) (string, error) {
	rec := site.Record(run)
	got := fmt.Sprintf("carrier page fetched %d time(s); the agent read %q; the site recorded the window %q", rec.Fetched["carrier"], found, rec.Slot)
	if rec.Fetched["carrier"] == 0 {
		return got, fmt.Errorf("the site never served the carrier's page")
	}
	return check(got, found == DeliveryWindow && strings.EqualFold(rec.Slot, DeliveryWindow), "confirmed %q after reading %q, want %q", rec.Slot, found, DeliveryWindow)
}

func check(got string, ok bool, format string, args ...any) (string, error) {
	if !ok {
		return got, fmt.Errorf(format, args...)
	}
	return got, nil
}

func equals(source, want string) func(context.Context, *Site, string, string) (string, error) {
	return func(_ context.Context, _ *Site, _, found string) (string, error) {
		return check(fmt.Sprintf("the agent read %q (%s %q)", found, source, want), found == want, "the agent read %q, want %q", found, want)
	}
}

var passphraseRE = regexp.MustCompile(`passphrase is ([A-Z0-9][A-Z0-9-]*[A-Z0-9])`)

func passphrase(text string) (string, error) {
	m := passphraseRE.FindStringSubmatch(text)
	if m == nil {
		return "", fmt.Errorf("no passphrase in what the agent read")
	}
	return m[1], nil
}

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

var consoleLineRE = regexp.MustCompile(`(?m)^\[ERROR\] (.*?)(?: @ \S+)?$`)

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

func confirmed(text, want string) (string, error) {
	if !strings.Contains(text, want) {
		return "", fmt.Errorf("the agent did not see %q in %q", want, truncate(text, 300))
	}
	return want, nil
}

type snapNode struct {
	indent                int
	role, name, ref, text string
	hasName               bool
}

// snapNodeRE: indentation, "- ", role, optional quoted name, attributes in
// brackets, then optionally ": text".
var snapNodeRE = regexp.MustCompile(`^( *)- ([A-Za-z/][\w/-]*)(?: ("(?:[^"\\]|\\.)*"))?((?: \[[^\]]*\])*)(?::(?: (.*))?)?$`)

// snapRefRE finds the element ref among a line's attributes, not in its
// name, which may contain "[ref=…]" as text.
var snapRefRE = regexp.MustCompile(`\[ref=([A-Za-z0-9_-]+)\]`)

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
		if t, err := strconv.Unquote(n.text); err == nil && strings.HasPrefix(n.text, `"`) {
			n.text = t
		}
		out = append(out, n)
	}
	return out
}

func (n snapNode) label() string {
	if n.hasName {
		return n.name
	}
	return n.text
}

func findNode(yaml, role string, match func(snapNode) bool) (string, bool) {
	for _, n := range parseNodes(yaml) {
		if n.role == role && n.ref != "" && match(n) {
			return n.ref, true
		}
	}
	return "", false
}

func ElementRef(yaml, role, name string) (string, bool) {
	return findNode(yaml, role, func(n snapNode) bool { return n.hasName && n.name == name })
}

func firstRef(yaml, role string) (string, bool) {
	return findNode(yaml, role, func(snapNode) bool { return true })
}

func refByNameContains(yaml, role, sub string) (string, bool) {
	return findNode(yaml, role, func(n snapNode) bool { return strings.Contains(strings.ToLower(n.name), strings.ToLower(sub)) })
}

// ButtonNear returns the ref of the button that goes with the element
// named name: the first button under that element's parent (the list item
// holding the link "Item 742" and the button "Add 742"), as a model reads
// "click the button of Item 742" off a snapshot.
func ButtonNear(yaml, name string) (string, bool) {
	nodes := parseNodes(yaml)
	i := slices.IndexFunc(nodes, func(n snapNode) bool { return n.hasName && n.name == name })
	if i < 0 {
		return "", false
	}
	parent := i - 1
	for parent >= 0 && nodes[parent].indent >= nodes[i].indent {
		parent--
	}
	if parent < 0 {
		return "", false
	}
	for _, n := range nodes[parent+1:] {
		if n.indent <= nodes[parent].indent {
			break
		}
		if n.role == "button" && n.ref != "" {
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
	for _, line := range strings.Split(yaml, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "- "+label+": "); ok && v != "" {
			return v, nil
		}
	}
	nodes := parseNodes(yaml)
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
// only money cell among id's siblings.
func rowTotal(yaml, id string) (string, error) {
	nodes := parseNodes(yaml)
	for i, n := range nodes {
		if n.label() != id {
			continue
		}
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
