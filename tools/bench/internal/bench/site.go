package bench

import (
	"context"
	_ "embed"
	"fmt"
	"html"
	"net"
	"net/http"
	"strings"
	"time"
)

const CatalogueItems = 1500

// Page is one test page the benchmark serves; Buttons are the labels a
// click may target.
type Page struct {
	Name, Path string
	Buttons    func(i int) string
}

// Pages are the pages of the local test site, by name.
var Pages = map[string]Page{
	"catalogue": {Name: "catalogue", Path: "/catalogue", Buttons: func(i int) string {
		return fmt.Sprintf("Add %d", i%CatalogueItems+1)
	}},
	"form": {Name: "form", Path: "/form", Buttons: func(i int) string {
		return [...]string{"Save draft", "Validate", "Preview"}[i%3]
	}},
	"table": {Name: "table", Path: "/table", Buttons: func(i int) string {
		return [...]string{"Sort by name", "Sort by price", "Sort by stock"}[i%3]
	}},
}

var (
	//go:embed pages/form.html
	formBody string
	//go:embed pages/catalogue.js
	catalogueJS string
	//go:embed pages/table.js
	tableJS string
)

// Site is the local test site on 127.0.0.1.
type Site struct {
	URL    string
	srv    *http.Server
	tokens *tokenRecord
}

// StartSite serves the form, table and catalogue pages, and the tokens
// scenario's pages, on 127.0.0.1 on a free port.
func StartSite() (*Site, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("test site: %w", err)
	}
	mux := http.NewServeMux()
	serve := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			fmt.Fprint(w, body)
		}
	}
	mux.HandleFunc("GET /catalogue", serve(cataloguePage()))
	mux.HandleFunc("GET /form", serve(page("Sign up", strings.TrimSuffix(formBody, "\n"))))
	mux.HandleFunc("GET /table", serve(tablePage()))
	mux.HandleFunc("GET /item/{n}", func(w http.ResponseWriter, r *http.Request) {
		serve(page("Item "+html.EscapeString(r.PathValue("n")), "<p>An item.</p>"))(w, r)
	})
	registerLivePages(mux, serve)
	tokens := &tokenRecord{}
	registerTokenPages(mux, tokens)
	s := &Site{URL: "http://" + ln.Addr().String(), srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, tokens: tokens}
	go s.srv.Serve(ln) // it ends with ErrServerClosed at Close: nothing to report
	return s, nil
}

func (s *Site) PageURL(p Page) string { return s.URL + p.Path }

func (s *Site) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return s.srv.Shutdown(ctx)
}

func page(title, body string) string {
	return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>` + title +
		`</title><link rel="icon" href="data:,"></head><body><h1>` + title + `</h1>` + body + `</body></html>`
}

func cataloguePage() string {
	var b strings.Builder
	b.WriteString(`<p id="cart" role="status">Cart: 0 items</p><main><section><h2>Products</h2><ul id="items">`)
	for i := 1; i <= CatalogueItems; i++ {
		fmt.Fprintf(&b, `<li><a href="/item/%d">Item %d</a> <span>€%d.%02d</span> <button type="button" data-id="%d">Add %d</button></li>`,
			i, i, 5+i%95, i%100, i, i)
	}
	b.WriteString("</ul></section></main><script>\n" + catalogueJS + `</script>`)
	return page("Catalogue", b.String())
}

func tablePage() string {
	var b strings.Builder
	b.WriteString(`<p><button type="button" data-k="1">Sort by name</button> <button type="button" data-k="2">Sort by price</button> <button type="button" data-k="3">Sort by stock</button></p>
<table id="t"><thead><tr><th>ID</th><th>Name</th><th>Price</th><th>Stock</th><th>Category</th></tr></thead><tbody>`)
	cats := []string{"Books", "Garden", "Kitchen", "Toys", "Tools"}
	for i := 1; i <= 200; i++ {
		fmt.Fprintf(&b, `<tr><td>%d</td><td>Product %03d</td><td>%d.%02d</td><td>%d</td><td>%s</td></tr>`,
			i, (i*37)%200, 3+(i*13)%90, (i*7)%100, (i*11)%50, cats[i%len(cats)])
	}
	b.WriteString("</tbody></table><script>\n" + tableJS + `</script>`)
	return page("Inventory", b.String())
}
