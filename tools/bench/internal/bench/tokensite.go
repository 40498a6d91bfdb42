package bench

import (
	"fmt"
	"html"
	"math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The tokens scenario's pages live under /t/{run}/: each side of a run gets
// its own run id, so what the site records (a cart POST, a sign-in, a form
// submission, a page fetched) is that side's alone and is the uncounted
// ground truth its task is verified against. Every page is deterministic:
// the same run id gives the same bytes.

// Sizes and targets of the tokens pages.
const (
	ShopProducts = 600
	OrderRows    = 400
	// ShopTarget is the product whose "Add to cart" the shop task clicks.
	ShopTarget = 417
	// OrderTarget is the order whose total the orders task reads.
	OrderTarget = 10277
	// SignInUser and SignInPassword are the credentials the sign-in page
	// accepts.
	SignInUser     = "ada"
	SignInPassword = "correct-horse-7"
	// ArticleKeyword occurs in the article only in ArticleTarget, which
	// holds ArticleCode.
	ArticleKeyword = "lighthouse"
	ArticleCode    = "AMBER-HERON-5821"
	// ParcelTracking is the value the second page of the link task shows.
	ParcelTracking = "NW-48213-7730"
	// StockProducts are the stock page's product cards; StockTarget the
	// one whose values the evaluate task reads.
	StockProducts = 300
	StockTarget   = 233
	// DeliveryWindow is the window the carrier's page shows, which the
	// tabs task confirms on the delivery page.
	DeliveryWindow = "14:00-16:00"
)

// DeliverySlots are the delivery page's windows, one button each.
var DeliverySlots = []string{"08:00-10:00", "10:00-12:00", "12:00-14:00", DeliveryWindow, "16:00-18:00", "18:00-20:00"}

// StockValues are the price, the count in stock and the SKU of product n
// of the stock page.
func StockValues(n int) (price, stock, sku string) {
	return ProductPrice(n), strconv.Itoa((n * 7) % 50), fmt.Sprintf("SK-%05d", (n*97)%100000)
}

// ArticleTarget is the article's target sentence.
var ArticleTarget = "According to the harbour ledger, the " + ArticleKeyword + " keeper's passphrase is " + ArticleCode + "."

// ConsoleErrors are the messages the dashboard page logs with
// console.error, beside info and warn noise.
var ConsoleErrors = []string{
	"Failed to load /api/widgets: 503 Service Unavailable",
	"TypeError: Cannot read properties of undefined (reading 'total') at renderSummary (dashboard.js:88)",
	"Unhandled promise rejection: QuotaExceededError: localStorage is full",
}

// ContactValues are what the contact task submits, by form field name.
var ContactValues = map[string]string{
	"name": "Ada Lovelace", "email": "ada@example.com", "topic": "Delivery",
	"order": "ORD-10277", "message": "The parcel has not arrived yet.", "copy": "on",
}

// Order is one row of the orders table.
type Order struct {
	ID, Date, Customer, Total, Status string
}

var orderCustomers = []string{"Ada Lovelace", "Alan Turing", "Grace Hopper", "Edsger Dijkstra", "Barbara Liskov",
	"Donald Knuth", "Frances Allen", "John Backus", "Margaret Hamilton", "Ken Thompson", "Radia Perlman"}

var orderStatuses = []string{"Paid", "Shipped", "Pending", "Delivered", "Refunded"}

// OrderAt is the order with the given number (10001 … 10000+OrderRows).
func OrderAt(n int) Order {
	i := n - 10000
	day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, (i*7)%300)
	return Order{
		ID:       fmt.Sprintf("ORD-%d", n),
		Date:     day.Format("2006-01-02"),
		Customer: orderCustomers[(i*13)%len(orderCustomers)],
		Total:    fmt.Sprintf("€%d.%02d", 12+(i*37)%480, (i*53)%100),
		Status:   orderStatuses[(i*3)%len(orderStatuses)],
	}
}

// ProductPrice is the shown price of product n.
func ProductPrice(n int) string { return fmt.Sprintf("€%d.%02d", 3+(n*37)%180, (n*53)%100) }

// tokenRecord is what the site saw of each run, for the verifications.
type tokenRecord struct {
	mu   sync.Mutex
	runs map[string]*RunRecord
}

// RunRecord is what the site recorded for one run id.
type RunRecord struct {
	// Cart holds the product ids the shop's buttons posted, in order.
	Cart []int
	// SignIns are the user names of the sign-in attempts; SignedIn is set
	// by a successful one.
	SignIns  []string
	SignedIn bool
	// OrdersServed counts the orders pages served to a signed-in client.
	OrdersServed int
	// Contact is the last contact form submitted.
	Contact url.Values
	// Fetched counts GETs by page name.
	Fetched map[string]int
	// Slot is the delivery window last confirmed.
	Slot string
}

func (t *tokenRecord) update(run string, f func(*RunRecord)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.runs == nil {
		t.runs = map[string]*RunRecord{}
	}
	r := t.runs[run]
	if r == nil {
		r = &RunRecord{Fetched: map[string]int{}}
		t.runs[run] = r
	}
	f(r)
}

// Record returns a copy of what the site recorded for run.
func (s *Site) Record(run string) RunRecord {
	var out RunRecord
	s.tokens.update(run, func(r *RunRecord) {
		out = *r
		out.Cart = append([]int(nil), r.Cart...)
		out.SignIns = append([]string(nil), r.SignIns...)
		out.Fetched = make(map[string]int, len(r.Fetched))
		for k, v := range r.Fetched {
			out.Fetched[k] = v
		}
		if r.Contact != nil {
			out.Contact = url.Values{}
			for k, v := range r.Contact {
				out.Contact[k] = append([]string(nil), v...)
			}
		}
	})
	return out
}

// TokenURL is the URL of a tokens page for run: shop, signin, orders,
// contact, article, account, parcel, dashboard.
func (s *Site) TokenURL(run, page string) string { return s.URL + "/t/" + run + "/" + page }

// runIDRE keeps run ids to short tokens: they appear in URLs and cookie
// names.
var runIDRE = regexp.MustCompile(`^[a-z0-9]{1,16}$`)

// registerTokenPages adds the tokens pages to mux.
func registerTokenPages(mux *http.ServeMux, rec *tokenRecord) {
	shop, signin, contact, article, account, parcel, dashboard :=
		shopPage(), signInPage(""), contactPage(), articlePage(), accountPage(), parcelPage(), dashboardPage()
	orders := ordersPage()
	write := func(w http.ResponseWriter, body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprint(w, body)
	}
	// handle wraps a page handler: it checks the run id and counts the GET.
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
	static := func(body string) func(http.ResponseWriter, *http.Request, string) {
		return func(w http.ResponseWriter, _ *http.Request, _ string) { write(w, body) }
	}
	handle("GET /t/{run}/shop", "shop", static(shop))
	handle("POST /t/{run}/cart", "", func(w http.ResponseWriter, r *http.Request, run string) {
		id, err := strconv.Atoi(r.URL.Query().Get("id"))
		if err != nil || id < 1 || id > ShopProducts {
			http.Error(w, "bad product id", http.StatusBadRequest)
			return
		}
		rec.update(run, func(rr *RunRecord) { rr.Cart = append(rr.Cart, id) })
		w.WriteHeader(http.StatusNoContent)
	})
	handle("GET /t/{run}/signin", "signin", static(signin))
	handle("POST /t/{run}/signin", "", func(w http.ResponseWriter, r *http.Request, run string) {
		user, pass := r.PostFormValue("username"), r.PostFormValue("password")
		ok := user == SignInUser && pass == SignInPassword
		rec.update(run, func(rr *RunRecord) {
			rr.SignIns = append(rr.SignIns, user)
			rr.SignedIn = rr.SignedIn || ok
		})
		if !ok {
			w.WriteHeader(http.StatusUnauthorized)
			write(w, signInPage("Wrong user name or password."))
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
	handle("GET /t/{run}/contact", "contact", static(contact))
	handle("POST /t/{run}/contact", "", func(w http.ResponseWriter, r *http.Request, run string) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, "bad form", http.StatusBadRequest)
			return
		}
		form := r.PostForm
		rec.update(run, func(rr *RunRecord) { rr.Contact = form })
		write(w, contactConfirmation(form))
	})
	handle("GET /t/{run}/article", "article", static(article))
	handle("GET /t/{run}/account", "account", static(account))
	handle("GET /t/{run}/parcel", "parcel", static(parcel))
	handle("GET /t/{run}/dashboard", "dashboard", static(dashboard))
	handle("GET /t/{run}/stock", "stock", static(stockPage()))
	handle("GET /t/{run}/carrier", "carrier", static(carrierPage()))
	handle("GET /t/{run}/delivery", "delivery", static(deliveryPage()))
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

func shopPage() string {
	var b strings.Builder
	b.WriteString(`<header><p id="cart" role="status">Cart: 0 items</p></header><main><h2>All products</h2><ul id="products">`)
	for i := 1; i <= ShopProducts; i++ {
		fmt.Fprintf(&b, `<li><h3>Product %d</h3><p>%s</p><button type="button" data-id="%d">Add to cart</button></li>`, i, ProductPrice(i), i)
	}
	b.WriteString(`</ul></main><script>
let n = 0;
document.getElementById('products').addEventListener('click', e => {
  const btn = e.target.closest('button');
  if (!btn || btn.disabled) return;
  n++;
  btn.textContent = 'In cart';
  btn.disabled = true;
  document.getElementById('cart').textContent = 'Cart: ' + n + (n === 1 ? ' item' : ' items');
  fetch('cart?id=' + btn.dataset.id, {method: 'POST'});
});
</script>`)
	return page("Shop", b.String())
}

func signInPage(problem string) string {
	msg := ""
	if problem != "" {
		msg = `<p role="alert">` + html.EscapeString(problem) + `</p>`
	}
	return page("Sign in", msg+`<form method="post" action="signin">
<p><label>Username <input name="username" autocomplete="off"></label></p>
<p><label>Password <input name="password" type="password"></label></p>
<p><button type="submit">Sign in</button></p>
</form><p><a href="signin">Forgot your password?</a></p>`)
}

func ordersPage() string {
	var b strings.Builder
	b.WriteString(`<p>Signed in as ada. <a href="signin">Sign out</a></p><table><caption>Your orders</caption><thead><tr><th>Order</th><th>Date</th><th>Customer</th><th>Total</th><th>Status</th></tr></thead><tbody>`)
	for n := 10001; n <= 10000+OrderRows; n++ {
		o := OrderAt(n)
		fmt.Fprintf(&b, `<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>`, o.ID, o.Date, o.Customer, o.Total, o.Status)
	}
	b.WriteString(`</tbody></table>`)
	return page("Orders", b.String())
}

func contactPage() string {
	return page("Contact us", `<form method="post" action="contact">
<p><label>Full name <input name="name" autocomplete="off"></label></p>
<p><label>Email <input name="email" type="email"></label></p>
<p><label>Topic <select name="topic"><option>Billing</option><option>Delivery</option><option>Returns</option><option>Other</option></select></label></p>
<p><label>Order number <input name="order"></label></p>
<p><label>Message <textarea name="message" rows="4"></textarea></label></p>
<p><label><input type="checkbox" name="copy"> Send me a copy</label></p>
<p><button type="submit">Send message</button></p>
</form>`)
}

// contactFields are the contact form's fields in the order the
// confirmation lists them, with their labels.
var contactFields = []struct{ name, label string }{
	{"name", "Name"}, {"email", "Email"}, {"topic", "Topic"}, {"order", "Order"}, {"message", "Message"}, {"copy", "Copy"},
}

func contactConfirmation(form url.Values) string {
	var b strings.Builder
	b.WriteString(`<p role="status">Thank you, we received your message.</p><dl>`)
	for _, f := range contactFields {
		v := form.Get(f.name)
		if f.name == "copy" {
			v = map[bool]string{true: "yes", false: "no"}[v == "on"]
		}
		fmt.Fprintf(&b, `<dt>%s</dt><dd>%s</dd>`, f.label, html.EscapeString(v))
	}
	b.WriteString(`</dl>`)
	return page("Message sent", b.String())
}

// articleWords is the article's vocabulary; ArticleKeyword is not in it.
var articleWords = strings.Fields(`the a of and to in that it with as for was on are by this be from at or an
which have not one had but were all when there can more if out so what up its about into than them only other
new some could time these two may then first any like now over such our even most after also made many before
must through back years where much your way well down should because each just those how too good very make
world still own see men work long here both between life being under never day same another know while last
might great old year off come since against came right used take three states himself few house use during
without again place around however home small found thought went say part once general high upon school every
does got united left number course war until always away something fact though water less public put think
almost hand enough far took head yet government system better set told nothing night end why called didn eyes
find going look asked later knew point next program city business give group toward young days let room
president side social given present several order national possible rather second face per among form
important often things looked early white john case become large big need four within felt along children saw
best church ever least power development light thing seemed family interest want members mind country area
others done turned although open god service certain kind problem began different door thus help sense means
whole matter perhaps itself york times law human line above name example action company hands local show five
history gave today either act feet across taken past quite anything seen having death experience body word
half really week field car words already themselves information tell shall together college period held keep
sure probably free real seems behind cannot miss political air question making office brought whose special
heard major problems ago became federal moment study available known result street economic boy position
reason change south board individual job society areas west close turn love community true court force full
seem am wife age future voice center woman control common policy necessary following front sometimes six girl
clear further land run students provide feel party able mother music education university child effect level
stood military town short morning total outside rate figure class art century washington north usually leave
therefore evidence percent million million harbour river market bridge garden winter summer autumn spring
valley forest island station railway ledger merchant captain sailor village mountain meadow orchard`)

// articlePage is a long article (about 110 KB) of generated prose in
// sections, with ArticleTarget in one paragraph about two thirds down.
func articlePage() string {
	rng := rand.New(rand.NewPCG(25, 2026))
	sentence := func() string {
		n := 9 + rng.IntN(14)
		ws := make([]string, n)
		for i := range ws {
			ws[i] = articleWords[rng.IntN(len(articleWords))]
		}
		s := strings.Join(ws, " ")
		return strings.ToUpper(s[:1]) + s[1:] + "."
	}
	var b strings.Builder
	b.WriteString(`<main><article><p><em>A long read about harbours, rivers and the people who kept them.</em></p>`)
	const sections, paras = 24, 8
	for s := 1; s <= sections; s++ {
		fmt.Fprintf(&b, `<h2>Chapter %d</h2>`, s)
		for p := 1; p <= paras; p++ {
			b.WriteString(`<p>`)
			n := 5 + rng.IntN(4)
			for i := 0; i < n; i++ {
				if i > 0 {
					b.WriteByte(' ')
				}
				if s == 16 && p == 5 && i == 2 {
					b.WriteString(ArticleTarget)
					continue
				}
				b.WriteString(sentence())
			}
			b.WriteString(`</p>`)
		}
	}
	b.WriteString(`</article></main>`)
	return page("The keepers of the coast", b.String())
}

// accountLinks are the account page's links; "Track your parcel" is the
// one the link task follows.
var accountLinks = []string{"Profile", "Addresses", "Payment methods", "Order history", "Returns", "Gift cards",
	"Wish list", "Subscriptions", "Notifications", "Privacy", "Security", "Connected devices", "Track your parcel",
	"Invoices", "Help centre", "Contact us"}

func accountPage() string {
	var b strings.Builder
	b.WriteString(`<nav aria-label="Account"><ul>`)
	for _, l := range accountLinks {
		href := "account/" + strings.ReplaceAll(strings.ToLower(l), " ", "-")
		if l == "Track your parcel" {
			href = "parcel"
		}
		fmt.Fprintf(&b, `<li><a href="%s">%s</a></li>`, href, l)
	}
	b.WriteString(`</ul></nav><main><h2>Recent activity</h2>`)
	for i := 1; i <= 12; i++ {
		fmt.Fprintf(&b, `<p>%s: order %s updated to %s.</p>`, OrderAt(10000+i*31).Date, OrderAt(10000+i*31).ID, OrderAt(10000+i*31).Status)
	}
	b.WriteString(`</main>`)
	return page("Your account", b.String())
}

func parcelPage() string {
	return page("Parcel status", `<main><p>Order ORD-10277, shipped 2026-03-09.</p><dl>
<dt>Carrier</dt><dd>Northwind Express</dd>
<dt>Tracking number</dt><dd>`+ParcelTracking+`</dd>
<dt>Estimated delivery</dt><dd>2026-03-14</dd>
<dt>Last scan</dt><dd>Rotterdam sorting centre, 2026-03-11 06:42</dd>
</dl><p><a href="account">Back to your account</a></p></main>`)
}

func dashboardPage() string {
	var b strings.Builder
	b.WriteString(`<main><h2>Summary</h2><p id="summary">Loading…</p><h2>Widgets</h2><ul id="widgets"><li>Sales</li><li>Visitors</li><li>Stock</li></ul></main><script>
`)
	for i := 1; i <= 14; i++ {
		fmt.Fprintf(&b, "console.info('[analytics] event %d: page_view section=%d');\n", i, i%4)
		if i%4 == 0 {
			fmt.Fprintf(&b, "console.warn('[deprecation] widget API v1 call #%d: use v2');\n", i/4)
		}
		switch i {
		case 5, 9, 13:
			fmt.Fprintf(&b, "console.error(%q);\n", ConsoleErrors[(i-5)/4])
		}
	}
	b.WriteString(`document.getElementById('summary').textContent = 'Summary unavailable';
</script>`)
	return page("Dashboard", b.String())
}

func stockPage() string {
	var b strings.Builder
	b.WriteString(`<main><h2>Stock list</h2>`)
	for i := 1; i <= StockProducts; i++ {
		price, stock, sku := StockValues(i)
		fmt.Fprintf(&b, `<article><h3>Product %d</h3><dl><dt>Price</dt><dd>%s</dd><dt>In stock</dt><dd>%s</dd><dt>SKU</dt><dd>%s</dd></dl></article>`, i, price, stock, sku)
	}
	b.WriteString(`</main>`)
	return page("Stock", b.String())
}

func carrierPage() string {
	var b strings.Builder
	b.WriteString(`<main><p>Shipment ORD-10277, Northwind Express.</p><table><thead><tr><th>Time</th><th>Scan</th></tr></thead><tbody>`)
	for i := 0; i < 12; i++ {
		fmt.Fprintf(&b, `<tr><td>2026-03-%02d %02d:%02d</td><td>Scanned at hub %d</td></tr>`, 9+i/4, 6+i, (i*17)%60, 40+i)
	}
	b.WriteString(`</tbody></table><dl><dt>Delivery date</dt><dd>2026-03-14</dd><dt>Delivery window</dt><dd>` + DeliveryWindow + `</dd></dl></main>`)
	return page("Northwind Express tracking", b.String())
}

func deliveryPage() string {
	var b strings.Builder
	b.WriteString(`<main><p>Order ORD-10277 arrives on 2026-03-14. Check the delivery window on the carrier's page, then confirm it here.</p><form method="post" action="delivery">`)
	for _, s := range DeliverySlots {
		fmt.Fprintf(&b, `<button name="slot" value="%s">Confirm %s</button>`, s, s)
	}
	b.WriteString(`</form></main>`)
	return page("Delivery", b.String())
}
