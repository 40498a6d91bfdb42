package bench

import (
	_ "embed"
	"fmt"
	"html"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"text/template"
	"time"
)

// The tokens scenario's pages live under /t/{run}/: each side of a run gets
// its own run id, so what the site records (a cart POST, a sign-in, a form
// submission, a page fetched) is that side's alone and is the uncounted
// ground truth its task is verified against. Every page is deterministic.

// Sizes and targets of the tokens pages: the shop task clicks ShopTarget's
// "Add to cart", the orders task reads OrderTarget's total after signing in,
// ArticleKeyword occurs in the article only in ArticleTarget, the link task
// reads ParcelTracking, the evaluate task StockTarget's values, and the tabs
// task confirms DeliveryWindow.
const (
	ShopProducts, ShopTarget    = 600, 417
	OrderRows, OrderTarget      = 400, 10277
	SignInUser, SignInPassword  = "ada", "correct-horse-7"
	ArticleKeyword, ArticleCode = "lighthouse", "AMBER-HERON-5821"
	ParcelTracking              = "NW-48213-7730"
	StockProducts, StockTarget  = 300, 233
	DeliveryWindow              = "14:00-16:00"
)

var DeliverySlots = []string{"08:00-10:00", "10:00-12:00", "12:00-14:00", DeliveryWindow, "16:00-18:00", "18:00-20:00"}

func StockValues(n int) (price, stock, sku string) {
	return ProductPrice(n), strconv.Itoa((n * 7) % 50), fmt.Sprintf("SK-%05d", (n*97)%100000)
}

var ArticleTarget = "According to the harbour ledger, the " + ArticleKeyword + " keeper's passphrase is " + ArticleCode + "."

var ConsoleErrors = []string{
	"Failed to load /api/widgets: 503 Service Unavailable",
	"TypeError: Cannot read properties of undefined (reading 'total') at renderSummary (dashboard.js:88)",
	"Unhandled promise rejection: QuotaExceededError: localStorage is full",
}

var ContactValues = map[string]string{
	"name": "Ada Lovelace", "email": "ada@example.com", "topic": "Delivery",
	"order": "ORD-10277", "message": "The parcel has not arrived yet.", "copy": "on",
}

type Order struct{ ID, Date, Customer, Total, Status string }

func OrderAt(n int) Order {
	i := n - 10000
	customers := []string{"Ada Lovelace", "Alan Turing", "Grace Hopper", "Edsger Dijkstra", "Barbara Liskov",
		"Donald Knuth", "Frances Allen", "John Backus", "Margaret Hamilton", "Ken Thompson", "Radia Perlman"}
	statuses := []string{"Paid", "Shipped", "Pending", "Delivered", "Refunded"}
	return Order{ID: fmt.Sprintf("ORD-%d", n), Date: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, (i*7)%300).Format("2006-01-02"),
		Customer: customers[(i*13)%len(customers)], Total: fmt.Sprintf("€%d.%02d", 12+(i*37)%480, (i*53)%100), Status: statuses[(i*3)%len(statuses)]}
}

func ProductPrice(n int) string { return fmt.Sprintf("€%d.%02d", 3+(n*37)%180, (n*53)%100) }

type tokenRecord struct {
	mu   sync.Mutex
	runs map[string]*RunRecord
}

type RunRecord struct {
	Cart         []int
	SignIns      []string
	SignedIn     bool
	OrdersServed int
	Contact      url.Values
	Fetched      map[string]int
	Slot         string
}

func (t *tokenRecord) update(run string, f func(*RunRecord)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.runs == nil {
		t.runs = map[string]*RunRecord{}
	}
	if t.runs[run] == nil {
		t.runs[run] = &RunRecord{Fetched: map[string]int{}}
	}
	f(t.runs[run])
}

func (s *Site) Record(run string) RunRecord {
	var out RunRecord
	s.tokens.update(run, func(r *RunRecord) {
		// Only Fetched changes in place: the slices are appended to and
		// Contact replaced whole.
		out = *r
		out.Fetched = maps.Clone(r.Fetched)
	})
	return out
}

func (s *Site) TokenURL(run, page string) string { return s.URL + "/t/" + run + "/" + page }

// runIDRE keeps run ids to short tokens: they appear in URLs and cookie
// names.
var runIDRE = regexp.MustCompile(`^[a-z0-9]{1,16}$`)

func registerTokenPages(mux *http.ServeMux, rec *tokenRecord) {
	write := func(w http.ResponseWriter, body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprint(w, body)
	}
	handle := func(pattern, name string, h func(w http.ResponseWriter, r *http.Request, run string)) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			run := r.PathValue("run")
			if !runIDRE.MatchString(run) {
				http.Error(w, "bad run id", http.StatusBadRequest)
				return
			}
			if r.Method == http.MethodGet && name != "" {
				rec.update(run, func(rr *RunRecord) { rr.Fetched[name]++ })
			}
			h(w, r, run)
		})
	}
	for name, body := range map[string]string{"shop": shopPage(), "signin": tokenPage("Sign in", "signin", ""), "contact": tokenPage("Contact us", "contact", nil),
		"article": articlePage(), "account": tokenPage("Your account", "account", accountLinks), "parcel": tokenPage("Parcel status", "parcel", ParcelTracking),
		"dashboard": dashboardPage(), "stock": tokenPage("Stock", "stock", StockProducts), "carrier": tokenPage("Northwind Express tracking", "carrier", DeliveryWindow),
		"delivery": tokenPage("Delivery", "delivery", DeliverySlots)} {
		handle("GET /t/{run}/"+name, name, func(w http.ResponseWriter, _ *http.Request, _ string) { write(w, body) })
	}
	orders := ordersPage()
	handle("POST /t/{run}/cart", "", func(w http.ResponseWriter, r *http.Request, run string) {
		id, err := strconv.Atoi(r.URL.Query().Get("id"))
		if err != nil || id < 1 || id > ShopProducts {
			http.Error(w, "bad product id", http.StatusBadRequest)
			return
		}
		rec.update(run, func(rr *RunRecord) { rr.Cart = append(rr.Cart, id) })
		w.WriteHeader(http.StatusNoContent)
	})
	handle("POST /t/{run}/signin", "", func(w http.ResponseWriter, r *http.Request, run string) {
		user, pass := r.PostFormValue("username"), r.PostFormValue("password")
		ok := user == SignInUser && pass == SignInPassword
		rec.update(run, func(rr *RunRecord) { rr.SignIns, rr.SignedIn = append(rr.SignIns, user), rr.SignedIn || ok })
		if !ok {
			w.WriteHeader(http.StatusUnauthorized)
			write(w, tokenPage("Sign in", "signin", "Wrong user name or password."))
			return
		}
		http.SetCookie(w, &http.Cookie{Name: "sid_" + run, Value: "signed-in", Path: "/t/" + run + "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
		http.Redirect(w, r, "/t/"+run+"/orders", http.StatusSeeOther)
	})
	handle("GET /t/{run}/orders", "orders", func(w http.ResponseWriter, r *http.Request, run string) {
		if c, err := r.Cookie("sid_" + run); err != nil || c.Value != "signed-in" {
			http.Redirect(w, r, "/t/"+run+"/signin", http.StatusSeeOther)
			return
		}
		rec.update(run, func(rr *RunRecord) { rr.OrdersServed++ })
		write(w, orders)
	})
	handle("POST /t/{run}/contact", "", func(w http.ResponseWriter, r *http.Request, run string) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, "bad form", http.StatusBadRequest)
			return
		}
		rec.update(run, func(rr *RunRecord) { rr.Contact = r.PostForm })
		write(w, tokenPage("Message sent", "sent", r.PostForm))
	})
	handle("POST /t/{run}/delivery", "", func(w http.ResponseWriter, r *http.Request, run string) {
		slot := r.PostFormValue("slot")
		rec.update(run, func(rr *RunRecord) { rr.Slot = slot })
		write(w, page("Delivery", "<main><p role=\"status\">Delivery confirmed for "+html.EscapeString(slot)+".</p></main>"))
	})
	// The account page's other links lead somewhere plain, not to a 404
	// that would add console errors.
	handle("GET /t/{run}/account/{section}", "", func(w http.ResponseWriter, r *http.Request, _ string) {
		write(w, page(html.EscapeString(r.PathValue("section")), "<p>Nothing here yet.</p>"))
	})
}

//go:embed pages/tokens.html
var tokenPagesHTML string

//go:embed pages/words.txt
var articleText string

var articleWords = strings.Fields(articleText)

var tokenPages = template.Must(template.New("").Funcs(template.FuncMap{
	"seq": func(a, b int) []int {
		var out []int
		for i := a; i <= b; i++ {
			out = append(out, i)
		}
		return out
	},
	"add": func(a, b int) int { return a + b }, "mul": func(a, b int) int { return a * b },
	"div": func(a, b int) int { return a / b }, "mod": func(a, b int) int { return a % b },
	"price": ProductPrice, "order": OrderAt,
	"stock": func(n int) []string { p, s, k := StockValues(n); return []string{p, s, k} },
	"slug":  func(s string) string { return strings.ReplaceAll(strings.ToLower(s), " ", "-") },
	// The dashboard logs ConsoleErrors at events 5, 9 and 13.
	"consoleError": func(i int) string {
		if i < 5 || i%4 != 1 || (i-5)/4 >= len(ConsoleErrors) {
			return ""
		}
		return ConsoleErrors[(i-5)/4]
	},
}).Parse(tokenPagesHTML))

func tokenPage(title, name string, data any) string {
	var b strings.Builder
	if err := tokenPages.ExecuteTemplate(&b, name, data); err != nil {
		panic(err) // the embedded templates are fixed: a failure is a bug here
	}
	return page(title, b.String())
}

func shopPage() string      { return tokenPage("Shop", "shop", ShopProducts) }
func ordersPage() string    { return tokenPage("Orders", "orders", 10000+OrderRows) }
func dashboardPage() string { return tokenPage("Dashboard", "dashboard", nil) }

// articlePage is a long article (about 110 KB) of generated prose in
// sections, with ArticleTarget in one paragraph about two thirds down.
func articlePage() string {
	rng := rand.New(rand.NewPCG(25, 2026))
	sentence := func() string {
		ws := make([]string, 9+rng.IntN(14))
		for i := range ws {
			ws[i] = articleWords[rng.IntN(len(articleWords))]
		}
		s := strings.Join(ws, " ")
		return strings.ToUpper(s[:1]) + s[1:] + "."
	}
	var b strings.Builder
	b.WriteString(`<main><article><p><em>A long read about harbours, rivers and the people who kept them.</em></p>`)
	for s := 1; s <= 24; s++ {
		fmt.Fprintf(&b, `<h2>Chapter %d</h2>`, s)
		for p := 1; p <= 8; p++ {
			var ss []string
			for i := range 5 + rng.IntN(4) {
				if s == 16 && p == 5 && i == 2 {
					ss = append(ss, ArticleTarget)
				} else {
					ss = append(ss, sentence())
				}
			}
			b.WriteString(`<p>` + strings.Join(ss, " ") + `</p>`)
		}
	}
	b.WriteString(`</article></main>`)
	return page("The keepers of the coast", b.String())
}

var accountLinks = []string{"Profile", "Addresses", "Payment methods", "Order history", "Returns", "Gift cards",
	"Wish list", "Subscriptions", "Notifications", "Privacy", "Security", "Connected devices", "Track your parcel",
	"Invoices", "Help centre", "Contact us"}
